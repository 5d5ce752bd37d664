// One full training step of every network on the CUDA backend against the CPU reference: forward, loss,
// backward and an optimizer update, in fp32, to a relative 1e-4; the QA transformer's loss and gradient, whole and
// through LoRA adapters, likewise. Skipped, with the reason, without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "models/architectures.hpp"
#include "models/optimizer.hpp"
#include "models/transformer/span_transformer.hpp"
#include "tests/gpu/cuda_test_fixture.hpp"

namespace dtsim::gpu {
namespace {

// max |a − b| / max |b|: sums of cancelling terms must not dominate the comparison.
double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(double(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

struct StepResult {
  double loss = 0;
  int64_t correct = 0;
  std::vector<float> grads;
  std::vector<float> params_after;
};

StepResult train_step(Ops<float>& ops, const models::Network<float>& net, const std::vector<float>& init,
                      const std::vector<float>& x, const std::vector<int32_t>& y, models::OptimizerKind kind) {
  const int batch = static_cast<int>(y.size());
  auto ws = net.make_workspace(ops, batch);
  Buffer<float> params(ops, init.size()), grads(ops, init.size());
  ops.upload(params.data(), init.data(), init.size());
  const LossSums sums = net.loss_and_gradient(ops, ws, params.data(), x.data(), y.data(), batch, grads.data());
  models::OptimizerSettings settings;
  settings.kind = kind;
  settings.weight_decay = 1e-4;
  auto optimizer = models::make_optimizer<float>(ops, net.param_tensors(), init.size(), settings);
  optimizer->step(params.data(), grads.data(), kind == models::OptimizerKind::Sgd ? 0.05 : 1e-3);
  StepResult r;
  r.loss = sums.loss;
  r.correct = sums.correct;
  r.grads.resize(init.size());
  r.params_after.resize(init.size());
  ops.download(r.grads.data(), grads.data(), init.size());
  ops.download(r.params_after.data(), params.data(), init.size());
  return r;
}

struct Case {
  const char* arch;
  models::Activation activation;
  models::OptimizerKind optimizer;
};

class CudaModelStep : public CudaOpsTest, public ::testing::WithParamInterface<Case> {};

TEST_P(CudaModelStep, AgreesWithTheCpuReference) {
  const Case c = GetParam();
  models::NetworkSpec spec;
  spec.arch = models::parse_architecture(c.arch);
  spec.activation = c.activation;
  if (spec.arch == models::Architecture::Mlp) spec.hidden = {256, 128};
  const auto net = models::make_network<float>(spec);
  std::vector<float> init(net->num_params());
  net->init_params(init.data(), 7);
  const int batch = 16;
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(batch) * net->input_size());
  for (float& v : x) v = pixel(gen);
  std::vector<int32_t> y(batch);
  for (int i = 0; i < batch; ++i) y[i] = i % 10;

  const StepResult on_cpu = train_step(cpu, *net, init, x, y, c.optimizer);
  const StepResult on_gpu = train_step(cuda(), *net, init, x, y, c.optimizer);
  EXPECT_NEAR(on_gpu.loss, on_cpu.loss, kBackendTolerance * std::fabs(on_cpu.loss));
  EXPECT_EQ(on_gpu.correct, on_cpu.correct);
  EXPECT_LE(relative_error(on_gpu.grads, on_cpu.grads), kBackendTolerance);
  EXPECT_LE(relative_error(on_gpu.params_after, on_cpu.params_after), kBackendTolerance);
}

INSTANTIATE_TEST_SUITE_P(
    EveryNetwork, CudaModelStep,
    ::testing::Values(Case{"logreg", models::Activation::Relu, models::OptimizerKind::Sgd},
                      Case{"mlp", models::Activation::Relu, models::OptimizerKind::Sgd},
                      Case{"mlp", models::Activation::Gelu, models::OptimizerKind::Adam},
                      Case{"mlp", models::Activation::Tanh, models::OptimizerKind::Lamb},
                      Case{"lenet", models::Activation::Relu, models::OptimizerKind::Sgd},
                      Case{"lenet", models::Activation::Relu, models::OptimizerKind::Lars},
                      Case{"cnn", models::Activation::Relu, models::OptimizerKind::Sgd},
                      Case{"cnn", models::Activation::Relu, models::OptimizerKind::AdamW}),
    [](const auto& info) {
      return std::string(info.param.arch) + "_" + models::to_string(info.param.activation) + "_" +
             models::to_string(info.param.optimizer);
    });

// The span transformer's loss and gradient (every base tensor, or the adapters) on both backends.
std::vector<float> transformer_gradient(Ops<float>& ops, const models::SpanTransformer<float>& model,
                                        const std::vector<float>& base, const std::vector<float>& adapters,
                                        const models::SpanBatch& batch, double& loss) {
  Buffer<float> b(ops, base.size()), a(ops, std::max<size_t>(1, adapters.size()));
  Buffer<float> g(ops, model.trained_param_count());
  ops.upload(b.data(), base.data(), base.size());
  if (!adapters.empty()) ops.upload(a.data(), adapters.data(), adapters.size());
  auto ws = model.make_workspace(ops, batch.batch);
  loss = model.loss_and_gradient(ops, ws, b.data(), adapters.empty() ? nullptr : a.data(), batch, g.data()).loss;
  std::vector<float> out(model.trained_param_count());
  ops.download(out.data(), g.data(), out.size());
  return out;
}

TEST_F(CudaOpsTest, SpanTransformerAgreesWithTheCpuReference) {
  models::TransformerConfig config;
  config.vocab = 50, config.seq_len = 32, config.dim = 64, config.heads = 4, config.layers = 2, config.ffn = 128;
  const int batch = 6;
  std::mt19937 gen(11);
  std::vector<int32_t> tokens(batch * config.seq_len), lengths(batch), starts(batch), ends(batch);
  for (int32_t& t : tokens) t = static_cast<int32_t>(gen() % config.vocab);
  for (int b = 0; b < batch; ++b) {
    lengths[b] = config.seq_len - 3 * b;  // padded sequences exercise the key mask
    starts[b] = b;
    ends[b] = b + 2;
  }
  const models::SpanBatch spans{batch, tokens.data(), lengths.data(), starts.data(), ends.data()};
  for (const auto positions : {models::PositionEncoding::Learned, models::PositionEncoding::Rotary}) {
    config.positions = positions;
    for (const int rank : {0, 4}) {
      SCOPED_TRACE(std::string(models::to_string(positions)) + " positions, rank " + std::to_string(rank));
      models::LoraConfig lora;
      lora.rank = rank;
      lora.mlp = true;
      const models::SpanTransformer<float> model(config, lora);
      std::vector<float> base(model.base_param_count()), adapters(model.adapter_param_count());
      model.init_base(base.data(), 5);
      std::normal_distribution<float> noise(0.0f, 0.1f);
      for (float& v : adapters) v = noise(gen);  // B ≠ 0, so that every adapter has a gradient
      double cpu_loss = 0, gpu_loss = 0;
      const auto on_cpu = transformer_gradient(cpu, model, base, adapters, spans, cpu_loss);
      const auto on_gpu = transformer_gradient(cuda(), model, base, adapters, spans, gpu_loss);
      EXPECT_NEAR(gpu_loss, cpu_loss, kBackendTolerance * std::fabs(cpu_loss));
      EXPECT_LE(relative_error(on_gpu, on_cpu), kBackendTolerance);
    }
  }
}

}  // namespace
}  // namespace dtsim::gpu
