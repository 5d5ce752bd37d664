// `make bench`: the CPU compute path against plain Eigen, side by side in one run.
//
// - GEMM: our CpuOps::gemm against Eigen's own GEMM on the same shapes (the shapes the networks use).
// - Training steps of the MLP, LeNet and the two-conv CNN (forward, backward, SGD update) in samples/s and
//   FLOP/s, with the FLOPs the models report.
// At the end a table gives each training step's FLOP rate as a ratio of the rate Eigen's GEMM reaches on that
// network's largest matrix product, measured in the same run: machines are noisy, ratios much less so.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/architectures.hpp"
#include "models/optimizer.hpp"
#include "tests/bench/bench_support.hpp"

namespace {

using dtsim::bench::random_floats;
using dtsim::bench::set_flops;

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The largest matrix product of each benchmarked network at its benchmark batch (m × k times k × n).
struct Shape {
  int m, k, n;
};
const std::map<std::string, Shape> kLargestProduct = {
    {"mlp", {128, 784, 256}},     // first dense layer, batch 128
    {"lenet", {64, 400, 120}},    // first fully connected layer, batch 64
    {"cnn", {64, 3136, 1024}},    // fully connected layer, batch 64
};

void BM_EigenGemm(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0)), k = static_cast<int>(state.range(1)), n = static_cast<int>(state.range(2));
  const auto a = random_floats(size_t(m) * k, 1), b = random_floats(size_t(k) * n, 2);
  RowMajor c(m, n);
  const Eigen::Map<const RowMajor> A(a.data(), m, k), B(b.data(), k, n);
  for (auto _ : state) {
    c.noalias() = A * B;
    benchmark::DoNotOptimize(c.data());
  }
  set_flops(state, 2.0 * m * k * n);
}

void BM_OpsGemm(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0)), k = static_cast<int>(state.range(1)), n = static_cast<int>(state.range(2));
  const auto a = random_floats(size_t(m) * k, 1), b = random_floats(size_t(k) * n, 2);
  std::vector<float> c(size_t(m) * n);
  dtsim::gpu::CpuOps<float> ops;
  for (auto _ : state) {
    ops.gemm(dtsim::gpu::Transpose::No, dtsim::gpu::Transpose::No, 1.0f, {a.data(), m, k}, {b.data(), k, n}, 0.0f,
             {c.data(), m, n});
    benchmark::DoNotOptimize(c.data());
  }
  set_flops(state, 2.0 * m * k * n);
}

void register_gemm_shapes(benchmark::internal::Benchmark* b) {
  for (const auto& [name, s] : kLargestProduct) b->Args({s.m, s.k, s.n});
}
BENCHMARK(BM_EigenGemm)->Apply(register_gemm_shapes)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OpsGemm)->Apply(register_gemm_shapes)->Unit(benchmark::kMicrosecond);

void train_step_benchmark(benchmark::State& state, const std::string& arch, int batch) {
  dtsim::models::NetworkSpec spec;
  spec.arch = dtsim::models::parse_architecture(arch);
  if (spec.arch == dtsim::models::Architecture::Mlp) spec.hidden = {256, 128};
  const auto net = dtsim::models::make_network<float>(spec);
  dtsim::gpu::CpuOps<float> ops;
  auto ws = net->make_workspace(ops, batch);
  std::vector<float> params(net->num_params()), grads(net->num_params());
  net->init_params(params.data(), 1);
  const auto x = random_floats(size_t(batch) * net->input_size(), 3);
  std::vector<int32_t> y(batch);
  for (int i = 0; i < batch; ++i) y[i] = i % 10;
  dtsim::models::OptimizerSettings sgd;
  auto optimizer = dtsim::models::make_optimizer<float>(ops, net->param_tensors(), params.size(), sgd);
  for (auto _ : state) {
    net->loss_and_gradient(ops, ws, params.data(), x.data(), y.data(), batch, grads.data());
    optimizer->step(params.data(), grads.data(), 1e-4);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * batch);
  set_flops(state, batch * (net->forward_flops_per_sample() + net->backward_flops_per_sample()));
}

BENCHMARK_CAPTURE(train_step_benchmark, mlp, std::string("mlp"), 128)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(train_step_benchmark, lenet, std::string("lenet"), 64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(train_step_benchmark, cnn, std::string("cnn"), 64)->Unit(benchmark::kMillisecond);

// The ratios, after Google Benchmark's table.
void print_ratios(const dtsim::bench::FlopRateReporter& reporter) {
  std::printf("\nTraining step FLOP rate / Eigen GEMM FLOP rate on the network's largest product (goal >= 0.60)\n");
  for (const auto& [arch, s] : kLargestProduct) {
    const std::string shape = std::to_string(s.m) + "/" + std::to_string(s.k) + "/" + std::to_string(s.n);
    const double eigen = reporter.rate("BM_EigenGemm/" + shape), ours = reporter.rate("BM_OpsGemm/" + shape);
    const double step = reporter.rate("train_step_benchmark/" + arch);
    if (eigen <= 0) continue;
    std::printf("  %-6s largest product %-14s Eigen %6.1f GFLOP/s  CpuOps::gemm %.2f  training step %.2f\n",
                arch.c_str(), shape.c_str(), eigen / 1e9, ours / eigen, step / eigen);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  dtsim::bench::FlopRateReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_ratios(reporter);
  benchmark::Shutdown();
  return 0;
}
