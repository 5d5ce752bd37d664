// NumericsOptions: mixed-precision storage of activations and gradients, and loss scaling.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/architectures.hpp"
#include "tests/models/gradient_check.hpp"

namespace dtsim::models {
namespace {

using gpu::CpuOps;
using gpu::NumberFormat;

// A LeNet in float on a batch of random images: convolutions, pooling and dense layers all take part.
class NumericsTest : public ::testing::Test {
 protected:
  static constexpr int kBatch = 4;

  NumericsTest() : net_(make_lenet()), ws_(net_->make_workspace(ops_, kBatch)) {
    params_.resize(net_->num_params());
    net_->init_params(params_.data(), 7);
    const auto x = gradcheck::random_values(static_cast<size_t>(kBatch) * net_->input_size(), 8, 0.0, 1.0);
    features_.assign(x.begin(), x.end());
  }

  static std::unique_ptr<Network<float>> make_lenet() {
    NetworkSpec spec;
    spec.arch = Architecture::LeNet;
    return make_network<float>(spec);
  }

  struct Pass {
    LossSums sums;
    std::vector<float> grads;
    std::vector<float> input_grads;
  };

  Pass run(const NumericsOptions& numerics) {
    Pass p;
    p.grads.assign(net_->num_params(), std::nanf(""));
    p.input_grads.assign(features_.size(), std::nanf(""));
    p.sums = net_->loss_and_gradient(ops_, ws_, params_.data(), features_.data(), labels_.data(), kBatch,
                                     p.grads.data(), numerics, p.input_grads.data());
    return p;
  }

  CpuOps<float> ops_;
  std::unique_ptr<Network<float>> net_;
  Workspace<float> ws_;
  std::vector<float> params_;
  std::vector<float> features_;
  std::vector<int32_t> labels_{3, 1, 4, 1};
};

// The pass written out with the layers alone, as loss_and_gradient computed it before NumericsOptions
// existed: no rounding and a loss gradient scaled by 1/batch.
TEST_F(NumericsTest, DefaultOptionsAreBitIdenticalToThePlainPass) {
  const size_t n = net_->num_layers();
  std::vector<std::vector<float>> acts(n), douts(n);
  size_t scratch_size = 0;
  for (size_t i = 0; i < n; ++i) {
    acts[i].resize(static_cast<size_t>(kBatch) * net_->layer(i).output_size());
    douts[i].resize(acts[i].size());
    scratch_size = std::max(scratch_size, net_->layer(i).scratch_size(ops_, kBatch));
  }
  std::vector<float> scratch(scratch_size), grads(net_->num_params());
  const auto input_of = [&](size_t i) {
    return i == 0 ? ConstMatrixView<float>(features_.data(), kBatch, net_->input_size())
                  : ConstMatrixView<float>(acts[i - 1].data(), kBatch, net_->layer(i - 1).output_size());
  };
  for (size_t i = 0; i < n; ++i)
    net_->layer(i).forward(ops_, params_.data() + net_->layer_param_offset(i), input_of(i),
                           {acts[i].data(), kBatch, net_->layer(i).output_size()}, scratch.data());
  const LossSums plain = ops_.softmax_cross_entropy({acts[n - 1].data(), kBatch, net_->num_classes()},
                                                    labels_.data(), douts[n - 1].data(), 1.0f / kBatch);
  for (size_t i = n; i-- > 0;) {
    const int width = net_->layer(i).output_size();
    const MatrixView<float> din =
        i == 0 ? MatrixView<float>{} : MatrixView<float>{douts[i - 1].data(), kBatch, net_->layer(i - 1).output_size()};
    net_->layer(i).backward(ops_, params_.data() + net_->layer_param_offset(i), input_of(i),
                            {acts[i].data(), kBatch, width}, {douts[i].data(), kBatch, width}, din,
                            grads.data() + net_->layer_param_offset(i), scratch.data());
  }

  std::vector<float> network_grads(net_->num_params());
  const LossSums sums = net_->loss_and_gradient(ops_, ws_, params_.data(), features_.data(), labels_.data(), kBatch,
                                                network_grads.data());
  EXPECT_EQ(sums.loss, plain.loss);
  EXPECT_EQ(sums.correct, plain.correct);
  EXPECT_EQ(network_grads, grads);
}

TEST_F(NumericsTest, ExplicitFp32OptionsReproduceTheDefaultBitForBit) {
  NumericsOptions fp32;
  fp32.activations = NumberFormat::Fp32;
  fp32.gradients = NumberFormat::Fp32;
  fp32.loss_scale = 1.0;
  std::vector<float> default_grads(net_->num_params());
  const LossSums d = net_->loss_and_gradient(ops_, ws_, params_.data(), features_.data(), labels_.data(), kBatch,
                                             default_grads.data());
  const Pass explicit_fp32 = run(fp32);
  EXPECT_EQ(explicit_fp32.sums.loss, d.loss);
  EXPECT_EQ(explicit_fp32.grads, default_grads);
}

TEST_F(NumericsTest, Bf16ActivationsChangeTheLossSlightly) {
  const Pass fp32 = run({});
  NumericsOptions bf16;
  bf16.activations = NumberFormat::Bf16;
  const Pass rounded = run(bf16);
  // bf16 keeps 8 significant bits (relative rounding error ≤ 2⁻⁹ ≈ 0.2 %): the loss moves, but little.
  EXPECT_NE(rounded.sums.loss, fp32.sums.loss);
  EXPECT_LT(std::fabs(rounded.sums.loss - fp32.sums.loss), 0.01 * fp32.sums.loss);
  // evaluate() with the same activation format sees the same forward pass.
  const LossSums evaluated = net_->evaluate(ops_, ws_, params_.data(), features_.data(), labels_.data(), kBatch,
                                            NumberFormat::Bf16);
  EXPECT_EQ(evaluated.loss, rounded.sums.loss);
}

TEST_F(NumericsTest, PowerOfTwoLossScaleScalesEveryGradientExactly) {
  const Pass unscaled = run({});
  NumericsOptions scaled_options;
  scaled_options.loss_scale = 1024.0;
  const Pass scaled = run(scaled_options);
  EXPECT_EQ(scaled.sums.loss, unscaled.sums.loss);  // the reported loss is never scaled
  size_t nonzero = 0;
  for (size_t i = 0; i < unscaled.grads.size(); ++i) {
    ASSERT_EQ(scaled.grads[i], 1024.0f * unscaled.grads[i]) << i;
    nonzero += unscaled.grads[i] != 0.0f ? 1 : 0;
  }
  EXPECT_GT(nonzero, unscaled.grads.size() / 2);
  for (size_t i = 0; i < unscaled.input_grads.size(); ++i)
    ASSERT_EQ(scaled.input_grads[i], 1024.0f * unscaled.input_grads[i]) << i;
}

TEST_F(NumericsTest, GradientsAreStoredInTheirFormat) {
  const Pass fp32 = run({});
  for (const NumberFormat format : {NumberFormat::Bf16, NumberFormat::Fp16}) {
    NumericsOptions options;
    options.gradients = format;
    // fp16 needs the loss scale its small gradients would flush to zero without.
    options.loss_scale = format == NumberFormat::Fp16 ? 256.0 : 1.0;
    const Pass rounded = run(options);
    for (const float g : rounded.grads) ASSERT_EQ(gpu::round_to(g, format), g) << gpu::to_string(format);
    for (const float g : rounded.input_grads) ASSERT_EQ(gpu::round_to(g, format), g) << gpu::to_string(format);
    std::vector<double> unscaled(rounded.grads.begin(), rounded.grads.end());
    for (double& g : unscaled) g /= options.loss_scale;
    // Rounding every backward output compounds through the layers, but stays a few tenths of a percent.
    EXPECT_LT(gradcheck::relative_error(unscaled, std::vector<double>(fp32.grads.begin(), fp32.grads.end())), 0.02)
        << gpu::to_string(format);
    EXPECT_EQ(rounded.sums.loss, fp32.sums.loss);  // activations untouched
  }
}

TEST_F(NumericsTest, NonPositiveLossScalesAreRejected) {
  for (const double bad : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
    NumericsOptions options;
    options.loss_scale = bad;
    EXPECT_THROW(run(options), std::invalid_argument) << bad;
  }
}

TEST(Numerics, EmbeddingIdsAreNeverRounded) {
  // bf16 has 8 significant bits: id 999 would become 1000, outside the vocabulary, and select a zero row.
  std::vector<std::unique_ptr<Layer<float>>> layers;
  layers.push_back(std::make_unique<Embedding<float>>(2, 1000, 3));
  layers.push_back(std::make_unique<Dense<float>>(6, 4));
  const Network<float> net("embedding", std::move(layers));
  CpuOps<float> ops;
  auto ws = net.make_workspace(ops, 1);
  std::vector<float> params(net.num_params());
  net.init_params(params.data(), 1);
  const std::vector<float> ids{999, 3};
  const int32_t label = 2;
  net.evaluate(ops, ws, params.data(), ids.data(), &label, 1, NumberFormat::Bf16);
  std::vector<float> embedded(6);
  ops.download(embedded.data(), ws.activations[0].data(), 6);
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(embedded[j], gpu::round_to(params[999 * 3 + j], NumberFormat::Bf16));
    EXPECT_EQ(embedded[3 + j], gpu::round_to(params[3 * 3 + j], NumberFormat::Bf16));
  }
}

}  // namespace
}  // namespace dtsim::models
