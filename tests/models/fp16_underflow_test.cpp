// fp16 gradient underflow, constructed on purpose, with the pieces the simulator trains with (Network with
// NumericsOptions, make_optimizer, LossScaler, unscale_and_check). A bias-free linear classifier sees
// Fashion-MNIST pixels scaled by 2^-26: every weight gradient is then at most 2^-26 in magnitude, below half
// of fp16's smallest subnormal (2^-24), so it rounds to zero and without loss scaling the weights never move.
// A learning rate multiplied by 2^52 undoes the input scaling exactly (all powers of two), so in fp32 the run
// is the ordinary problem at lr 0.05. With dynamic loss scaling (2^16) the gradients survive.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "gpu/cpu_ops.hpp"
#include "models/dataset.hpp"
#include "models/evaluation.hpp"
#include "models/loss_scaler.hpp"
#include "models/network.hpp"
#include "models/optimizer.hpp"

namespace dtsim::models {
namespace {

constexpr float kInputScale = 0x1p-26f;
constexpr double kLearningRate = 0.05 * 0x1p52;

// y = x·W with no bias: a bias gradient does not shrink with the inputs, and a learning rate this large
// would blow it up, so the constructed case leaves it out.
class BiasFreeLinear final : public Layer<float> {
 public:
  BiasFreeLinear(int in, int out) : in_(in), out_(out) {}
  std::string kind() const override { return "linear"; }
  int input_size() const override { return in_; }
  int output_size() const override { return out_; }
  size_t param_count() const override { return static_cast<size_t>(in_) * out_; }
  std::vector<ParamTensor> param_tensors(const std::string& prefix) const override {
    return {{prefix + ".weight", 0, param_count(), false}};
  }
  void init_params(float* params, Rng& rng, InitScheme) const override {
    for (size_t i = 0; i < param_count(); ++i) params[i] = static_cast<float>(rng.uniform(-0.05, 0.05));
  }
  double forward_flops() const override { return 2.0 * in_ * out_; }
  double backward_flops(bool with_input_grad) const override { return (with_input_grad ? 4.0 : 2.0) * in_ * out_; }
  void forward(Ops<float>& ops, const float* params, ConstMatrixView<float> in, MatrixView<float> out,
               float*) const override {
    ops.gemm(gpu::Transpose::No, gpu::Transpose::No, 1.0f, in, {params, in_, out_}, 0.0f, out);
  }
  void backward(Ops<float>& ops, const float* params, ConstMatrixView<float> in, ConstMatrixView<float>,
                ConstMatrixView<float> dout, MatrixView<float> din, float* dparams, float*) const override {
    ops.gemm(gpu::Transpose::Yes, gpu::Transpose::No, 1.0f, in, dout, 0.0f, {dparams, in_, out_});
    if (din.data) ops.gemm(gpu::Transpose::No, gpu::Transpose::Yes, 1.0f, dout, {params, in_, out_}, 0.0f, din);
  }

 private:
  int in_, out_;
};

struct Outcome {
  double accuracy = 0;
  double weight_change = 0;
  int64_t nonzero_gradients = 0;  // over the whole run, after rounding to the gradient format
};

Outcome train(gpu::NumberFormat gradients, LossScaleMode scaling) {
  Dataset train = load_fashion_mnist(DTSIM_FASHION_MNIST_DIR, Split::Train, 4096);
  Dataset test = load_fashion_mnist(DTSIM_FASHION_MNIST_DIR, Split::Test, 1000);
  for (float& v : train.features) v *= kInputScale;
  for (float& v : test.features) v *= kInputScale;

  std::vector<std::unique_ptr<Layer<float>>> layers;
  layers.push_back(std::make_unique<BiasFreeLinear>(784, 10));
  const Network<float> net("bias-free linear", std::move(layers));
  gpu::CpuOps<float> ops;
  const int batch = 64;
  auto ws = net.make_workspace(ops, batch);
  std::vector<float> params(net.num_params()), initial(net.num_params()), grads(net.num_params());
  net.init_params(params.data(), 1);
  initial = params;
  OptimizerSettings sgd;
  sgd.momentum = 0.0;
  auto optimizer = make_optimizer<float>(ops, net.param_tensors(), params.size(), sgd);
  LossScalerSettings scaler_settings;
  scaler_settings.mode = scaling;
  scaler_settings.init_scale = scaling == LossScaleMode::None ? 1.0 : 65536.0;
  LossScaler scaler(scaler_settings);

  Outcome out;
  std::vector<float> x(static_cast<size_t>(batch) * 784);
  std::vector<int32_t> y(batch), indices(batch);
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (int start = 0; start + batch <= train.num_samples; start += batch) {
      for (int i = 0; i < batch; ++i) indices[i] = start + i;
      gather_batch(train, indices.data(), batch, x.data(), y.data());
      NumericsOptions numerics;
      numerics.gradients = gradients;
      numerics.loss_scale = scaler.scale();
      net.loss_and_gradient(ops, ws, params.data(), x.data(), y.data(), batch, grads.data(), numerics);
      for (const float g : grads) out.nonzero_gradients += g != 0.0f;
      const bool overflow = unscale_and_check(ops, grads.data(), grads.size(), scaler.scale());
      if (scaler.update(overflow)) optimizer->step(params.data(), grads.data(), kLearningRate);
    }
  }
  auto eval_ws = net.make_workspace(ops, 500, WorkspaceUse::Evaluation);
  out.accuracy = evaluate_dataset(net, ops, eval_ws, params.data(), test).accuracy;
  for (size_t i = 0; i < params.size(); ++i) out.weight_change += std::fabs(double(params[i]) - initial[i]);
  return out;
}

TEST(Fp16Underflow, WithoutLossScalingTheWeightsNeverMoveAndWithItTheModelTrains) {
  const Outcome fp32 = train(gpu::NumberFormat::Fp32, LossScaleMode::None);
  const Outcome fp16 = train(gpu::NumberFormat::Fp16, LossScaleMode::None);
  const Outcome scaled = train(gpu::NumberFormat::Fp16, LossScaleMode::Dynamic);

  std::printf("test accuracy: fp32 %.4f, fp16 without scaling %.4f, fp16 with dynamic scaling %.4f\n",
              fp32.accuracy, fp16.accuracy, scaled.accuracy);
  EXPECT_GT(fp32.accuracy, 0.70);  // a linear model on 4096 Fashion-MNIST images, 3 epochs
  EXPECT_EQ(fp16.nonzero_gradients, 0);
  EXPECT_EQ(fp16.weight_change, 0.0);
  EXPECT_GT(scaled.nonzero_gradients, 0);
  EXPECT_GT(scaled.weight_change, 0.0);
  EXPECT_NEAR(scaled.accuracy, fp32.accuracy, 0.02);
  EXPECT_LT(fp16.accuracy, 0.5 * fp32.accuracy);  // still the random initialisation
}

}  // namespace
}  // namespace dtsim::models
