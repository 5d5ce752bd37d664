// The CUDA compute path against cuBLAS itself, side by side in one run on one GPU (run by
// tests/gpu/device_check.sh; without a usable GPU it says why and exits 77).
//
// - cuBLAS SGEMM in full FP32 (no TF32, as CudaOps runs it) on each network's largest matrix product and on a
//   large square product, where the GPU's FP32 rate peaks;
// - cuBLAS BF16 GEMM (BF16 inputs, FP32 accumulation, tensor cores) on the large square product: the GPU's
//   practical matrix peak, the denominator of a model FLOPs utilisation;
// - CudaOps::gemm on the networks' largest products (our wrapper's overhead over a bare cuBLAS call);
// - training steps of the MLP, LeNet and the two-conv CNN on CudaOps (forward, loss, backward, SGD update; the
//   batch is uploaded from the host every step and the loss read back, as a dtsim run does), at the CPU bench's
//   batches and at batch 1024.
// The table at the end gives each training step's FLOP rate as a ratio of the SGEMM rate on that network's
// largest product at the same batch, of the FP32 peak and of the BF16 peak, all measured in this run.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/buffer.hpp"
#include "gpu/cuda_device.hpp"
#include "gpu/cuda_ops.hpp"
#include "models/architectures.hpp"
#include "models/optimizer.hpp"
#include "tests/bench/bench_support.hpp"

namespace {

using dtsim::bench::random_floats;
using dtsim::bench::set_flops;

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}
void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + " failed, status " + std::to_string(int(status)));
}

// The one CudaOps of the process (it owns the device context) and a bare cuBLAS handle for the references.
dtsim::gpu::CudaOps& cuda() {
  static dtsim::gpu::CudaOps ops(0);
  return ops;
}
cublasHandle_t cublas() {
  static cublasHandle_t handle = [] {
    cuda();  // the device is current before the handle is made
    cublasHandle_t h = nullptr;
    check(cublasCreate(&h), "cublasCreate");
    check(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");  // FP32 stays FP32: no TF32
    return h;
  }();
  return handle;
}

// Device memory holding `n` elements of T, freed on scope exit.
template <typename T>
struct DeviceArray {
  T* data = nullptr;
  explicit DeviceArray(size_t n) { check(cudaMalloc(&data, n * sizeof(T)), "cudaMalloc"); }
  ~DeviceArray() { cudaFree(data); }
  DeviceArray(DeviceArray&& other) noexcept : data(other.data) { other.data = nullptr; }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

DeviceArray<float> device_random(size_t n, unsigned seed) {
  const auto host = random_floats(n, seed);
  DeviceArray<float> d(n);
  check(cudaMemcpy(d.data, host.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

// BF16 keeps a float's top 16 bits (truncation is fine for timing inputs).
DeviceArray<uint16_t> device_random_bf16(size_t n, unsigned seed) {
  const auto host = random_floats(n, seed);
  std::vector<uint16_t> bits(n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &host[i], sizeof u);
    bits[i] = static_cast<uint16_t>(u >> 16);
  }
  DeviceArray<uint16_t> d(n);
  check(cudaMemcpy(d.data, bits.data(), n * sizeof(uint16_t), cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

// Times `launches` back-to-back launches of `launch` with CUDA events and reports the time per launch, so that
// small products are not dominated by a host synchronisation per product.
template <typename Launch>
void time_on_device(benchmark::State& state, int launches, Launch launch) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  launch();  // warm-up: cuBLAS picks and loads its kernel here
  check(cudaDeviceSynchronize(), "warm-up");
  for (auto _ : state) {
    check(cudaEventRecord(start), "cudaEventRecord");
    for (int i = 0; i < launches; ++i) launch();
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    state.SetIterationTime(ms / 1e3 / launches);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

int launches_for(double flops) { return flops < 1e9 ? 100 : 5; }

// Column-major C (m × n) = A (m × k) · B (k × n); the transposes of a row-major call do not change the cost.
void BM_CublasSgemm(benchmark::State& state) {
  const int m = int(state.range(0)), k = int(state.range(1)), n = int(state.range(2));
  const auto a = device_random(size_t(m) * k, 1), b = device_random(size_t(k) * n, 2);
  DeviceArray<float> c(size_t(m) * n);
  const float alpha = 1, beta = 0;
  const double flops = 2.0 * m * k * n;
  time_on_device(state, launches_for(flops), [&] {
    check(cublasSgemm(cublas(), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.data, m, b.data, k, &beta, c.data, m),
          "cublasSgemm");
  });
  set_flops(state, flops);
}

void BM_CublasBf16Gemm(benchmark::State& state) {
  const int m = int(state.range(0)), k = int(state.range(1)), n = int(state.range(2));
  const auto a = device_random_bf16(size_t(m) * k, 1), b = device_random_bf16(size_t(k) * n, 2);
  DeviceArray<uint16_t> c(size_t(m) * n);
  const float alpha = 1, beta = 0;
  const double flops = 2.0 * m * k * n;
  time_on_device(state, launches_for(flops), [&] {
    check(cublasGemmEx(cublas(), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.data, CUDA_R_16BF, m, b.data,
                       CUDA_R_16BF, k, &beta, c.data, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  });
  set_flops(state, flops);
}

void BM_CudaOpsGemm(benchmark::State& state) {
  const int m = int(state.range(0)), k = int(state.range(1)), n = int(state.range(2));
  const auto a = device_random(size_t(m) * k, 1), b = device_random(size_t(k) * n, 2);
  DeviceArray<float> c(size_t(m) * n);
  const double flops = 2.0 * m * k * n;
  time_on_device(state, launches_for(flops), [&] {
    cuda().gemm(dtsim::gpu::Transpose::No, dtsim::gpu::Transpose::No, 1.0f, {a.data, m, k}, {b.data, k, n}, 0.0f,
                {c.data, m, n});
  });
  set_flops(state, flops);
}

// The largest matrix product of each benchmarked network per sample of the batch (the batch is its rows).
struct Product {
  int k, n;
};
const std::map<std::string, Product> kLargestProduct = {
    {"mlp", {784, 256}},    // first dense layer
    {"lenet", {400, 120}},  // first fully connected layer
    {"cnn", {3136, 1024}},  // fully connected layer
};
const std::map<std::string, int> kCpuBenchBatch = {{"mlp", 128}, {"lenet", 64}, {"cnn", 64}};
constexpr int kLargeBatch = 1024;
constexpr int kPeakSize = 8192;

void register_network_products(benchmark::internal::Benchmark* b) {
  for (const auto& [arch, p] : kLargestProduct)
    for (const int batch : {kCpuBenchBatch.at(arch), kLargeBatch}) b->Args({batch, p.k, p.n});
}
void register_peak(benchmark::internal::Benchmark* b) { b->Args({kPeakSize, kPeakSize, kPeakSize}); }

BENCHMARK(BM_CublasSgemm)->Apply(register_network_products)->Apply(register_peak)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CublasBf16Gemm)->Apply(register_peak)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CudaOpsGemm)->Apply(register_network_products)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_TrainStep(benchmark::State& state, const std::string& arch) {
  const int batch = int(state.range(0));
  dtsim::models::NetworkSpec spec;
  spec.arch = dtsim::models::parse_architecture(arch);
  if (spec.arch == dtsim::models::Architecture::Mlp) spec.hidden = {256, 128};
  const auto net = dtsim::models::make_network<float>(spec);
  auto& ops = cuda();
  auto ws = net->make_workspace(ops, batch);
  std::vector<float> init(net->num_params());
  net->init_params(init.data(), 1);
  dtsim::gpu::Buffer<float> params(ops, init.size()), grads(ops, init.size());
  ops.upload(params.data(), init.data(), init.size());
  const auto x = random_floats(size_t(batch) * net->input_size(), 3);
  std::vector<int32_t> y(batch);
  for (int i = 0; i < batch; ++i) y[i] = i % 10;
  dtsim::models::OptimizerSettings sgd;
  auto optimizer = dtsim::models::make_optimizer<float>(ops, net->param_tensors(), init.size(), sgd);
  const auto step = [&] {
    net->loss_and_gradient(ops, ws, params.data(), x.data(), y.data(), batch, grads.data());
    optimizer->step(params.data(), grads.data(), 1e-4);
  };
  step();  // warm-up
  ops.synchronize();
  for (auto _ : state) {
    step();
    ops.synchronize();
  }
  state.SetItemsProcessed(state.iterations() * batch);
  set_flops(state, batch * (net->forward_flops_per_sample() + net->backward_flops_per_sample()));
}

void register_batches(benchmark::internal::Benchmark* b, const std::string& arch) {
  b->Arg(kCpuBenchBatch.at(arch))->Arg(kLargeBatch);
}
BENCHMARK_CAPTURE(BM_TrainStep, mlp, std::string("mlp"))
    ->Apply([](benchmark::internal::Benchmark* b) { register_batches(b, "mlp"); })->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TrainStep, lenet, std::string("lenet"))
    ->Apply([](benchmark::internal::Benchmark* b) { register_batches(b, "lenet"); })->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TrainStep, cnn, std::string("cnn"))
    ->Apply([](benchmark::internal::Benchmark* b) { register_batches(b, "cnn"); })->UseRealTime()->Unit(benchmark::kMillisecond);

// The ratios, after Google Benchmark's table.
void print_ratios(const dtsim::bench::FlopRateReporter& reporter) {
  const std::string peak = std::to_string(kPeakSize) + "/" + std::to_string(kPeakSize) + "/" + std::to_string(kPeakSize);
  const double fp32_peak = reporter.rate("BM_CublasSgemm/" + peak + "/manual_time");
  const double bf16_peak = reporter.rate("BM_CublasBf16Gemm/" + peak + "/manual_time");
  std::printf("\ncuBLAS at %d^3: FP32 SGEMM %.1f TFLOP/s, BF16 GEMM (FP32 accumulation) %.1f TFLOP/s\n", kPeakSize,
              fp32_peak / 1e12, bf16_peak / 1e12);
  std::printf("Training step FLOP rate as a ratio of cuBLAS SGEMM on the network's largest product at the same "
              "batch, of the FP32 peak and of the BF16 peak\n");
  for (const auto& [arch, p] : kLargestProduct) {
    for (const int batch : {kCpuBenchBatch.at(arch), kLargeBatch}) {
      const std::string shape = std::to_string(batch) + "/" + std::to_string(p.k) + "/" + std::to_string(p.n);
      const double sgemm = reporter.rate("BM_CublasSgemm/" + shape + "/manual_time");
      const double ours = reporter.rate("BM_CudaOpsGemm/" + shape + "/manual_time");
      const double step = reporter.rate("BM_TrainStep/" + arch + "/" + std::to_string(batch) + "/real_time");
      if (sgemm <= 0 || fp32_peak <= 0 || bf16_peak <= 0) continue;
      std::printf("  %-6s batch %-5d largest product %-16s SGEMM %7.2f TFLOP/s  CudaOps::gemm %.2f  training step "
                  "%.3f of it, %.4f of FP32 peak, %.4f of BF16 peak\n",
                  arch.c_str(), batch, shape.c_str(), sgemm / 1e12, ours / sgemm, step / sgemm, step / fp32_peak,
                  step / bf16_peak);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const dtsim::gpu::CudaStatus status = dtsim::gpu::probe_cuda();
  if (!status.usable) {
    std::printf("dtsim_cuda_bench: %s; nothing measured\n", status.reason.c_str());
    return 77;
  }
  std::printf("device 0: %s\n", status.device_name.c_str());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  dtsim::bench::FlopRateReporter reporter;
  try {
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } catch (const std::exception& e) {
    std::printf("dtsim_cuda_bench: %s\n", e.what());
    return 1;
  }
  print_ratios(reporter);
  benchmark::Shutdown();
  return 0;
}
