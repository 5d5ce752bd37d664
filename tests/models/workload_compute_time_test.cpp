// The per-layer roofline against hand arithmetic: the longer of FLOPs / peak and bytes / bandwidth, plus a
// launch per kernel; a step is the sum over layers of both passes, the recomputation and the optimizer.
#include <gtest/gtest.h>

#include "models/network.hpp"
#include "models/workload/catalog.hpp"
#include "models/workload/compute_time.hpp"
#include "models/workload/network_workload.hpp"

namespace dtsim::models {
namespace {

const DeviceRates kDevice{100e12, 1e12, 5e-6};  // 100 TFLOP/s, 1 TB/s, 5 us per launch

LayerCost linear(double flops, std::uint64_t weights, double traffic) {
  LayerCost l;
  l.kind = "linear";
  l.parameters = l.trainable = weights;
  l.forward_flops = flops;
  l.backward_flops = 2 * flops;
  l.forward_traffic = traffic;
  l.backward_traffic = 2 * traffic;
  l.forward_kernels = 1;
  l.backward_kernels = 2;
  return l;
}

TEST(Roofline, ComputeBoundLayerTakesItsFlopsAtThePeak) {
  // 1 GFLOP per sample, 1 M weights and 1 M elements of traffic at 2 bytes: 8 samples = 80 us of FLOPs
  // against (2 MB + 16 MB) / 1 TB/s = 18 us of bytes.
  const LayerCost l = linear(1e9, 1'000'000, 1e6);
  EXPECT_DOUBLE_EQ(layer_forward_seconds(l, 8, 2, kDevice), 8e9 / 100e12 + 5e-6);
  EXPECT_DOUBLE_EQ(layer_backward_seconds(l, 8, 2, kDevice), 16e9 / 100e12 + 2 * 5e-6);
}

TEST(Roofline, MemoryBoundLayerTakesItsBytesAtTheBandwidth) {
  LayerCost norm;
  norm.kind = "norm";
  norm.parameters = norm.trainable = 4096;
  norm.forward_traffic = 2e6;
  norm.backward_traffic = 3e6;
  norm.forward_kernels = 1;
  norm.backward_kernels = 2;
  // Forward: weights once plus 4 samples' traffic, 2 bytes each. Backward: weights read and their gradient
  // written, plus the traffic.
  EXPECT_DOUBLE_EQ(layer_forward_seconds(norm, 4, 2, kDevice), 2 * (4096 + 4 * 2e6) / 1e12 + 5e-6);
  EXPECT_DOUBLE_EQ(layer_backward_seconds(norm, 4, 2, kDevice), 2 * (2 * 4096 + 4 * 3e6) / 1e12 + 2 * 5e-6);
}

TEST(Roofline, StepAddsBothPassesRecomputationAndTheOptimizer) {
  Workload w;
  w.layers = {linear(1e9, 1'000'000, 1e6), linear(1e9, 1'000'000, 1e6)};
  w.layers[0].block = 0;  // only block layers are recomputed
  MemorySetup s;          // bf16, fp32 master weights, Adam (8 bytes), micro-batch 1
  StepCompute t = step_compute(w, s, kDevice);
  const double fwd = 1e9 / 100e12 + 5e-6, bwd = 2e9 / 100e12 + 10e-6;
  EXPECT_DOUBLE_EQ(t.forward, 2 * fwd);
  EXPECT_DOUBLE_EQ(t.backward, 2 * bwd);
  EXPECT_DOUBLE_EQ(t.recompute, 0);
  // Per weight: gradient 2, weight read and written 4, master read and written 8, moments read and written 16.
  EXPECT_DOUBLE_EQ(t.optimizer, 30 * 2e6 / 1e12 + 2 * 5e-6);
  EXPECT_EQ(t.kernels, 2 * 3 + 2);
  s.checkpointing = true;
  s.zero_stage = 1;
  s.data_parallel = 4;
  t = step_compute(w, s, kDevice);
  EXPECT_DOUBLE_EQ(t.recompute, fwd);
  EXPECT_DOUBLE_EQ(t.optimizer, 30 * 2e6 / 4 / 1e12 + 2 * 5e-6);  // this GPU's shard only
  EXPECT_NEAR(t.compute_bound + t.memory_bound + t.launches, t.total(), 1e-15);
}

TEST(Roofline, AForeachOptimizerPassesOverMemoryOncePerArithmeticStep) {
  // PyTorch's multi-tensor Adam, written out from torch/optim/adam.py's _multi_tensor_adam, per trained weight
  // in bf16 with an fp32 master copy (P, 4 bytes), gradient g (2 bytes), moments m, v and temporary t (4 each):
  //   m *= b1        read m, write m          8        v += c g^2      read v, g, write v     10
  //   m += c g       read m, g, write m      10        t = sqrt(v)     read v, write t         8
  //   v *= b2        read v, write v          8        t /= c2         read t, write t         8
  //   t += eps       read t, write t          8        P += -s m / t   read P, m, t, write P  16
  // then the copy to the bf16 weights (read 4, write 2): 82 bytes and 9 kernels against the fused 30 and 1.
  Workload w;
  w.layers = {linear(1e9, 1'000'000, 1e6), linear(1e9, 1'000'000, 1e6)};
  MemorySetup s;
  s.optimizer_kernels = OptimizerKernels::Foreach;
  EXPECT_DOUBLE_EQ(optimizer_update(s).bytes_per_weight, 8 + 10 + 8 + 10 + 8 + 8 + 8 + 16 + 6);
  EXPECT_EQ(optimizer_update(s).kernels_per_layer, 9);
  const StepCompute t = step_compute(w, s, kDevice);
  EXPECT_DOUBLE_EQ(t.optimizer, 82 * 2e6 / 1e12 + 2 * 9 * 5e-6);
  EXPECT_EQ(t.kernels, 2 * 3 + 2 * 9);
  // SGD with momentum in fp32 (no master copy): b *= mu (8), b += g (12), P -= lr b (12): 32 bytes, 3 kernels;
  // plain SGD: P -= lr g (12), 1 kernel. Fused, the same optimizers read and write each tensor once: 20 and 12.
  s.weight_bytes = s.gradient_bytes = s.activation_bytes = 4;
  s.optimizer_bytes = 4;
  EXPECT_DOUBLE_EQ(optimizer_update(s).bytes_per_weight, 32);
  EXPECT_EQ(optimizer_update(s).kernels_per_layer, 3);
  s.optimizer_bytes = 0;
  EXPECT_DOUBLE_EQ(optimizer_update(s).bytes_per_weight, 12);
  EXPECT_EQ(optimizer_update(s).kernels_per_layer, 1);
  s.optimizer_kernels = OptimizerKernels::Fused;
  EXPECT_DOUBLE_EQ(optimizer_update(s).bytes_per_weight, 12);
  s.optimizer_bytes = 4;
  EXPECT_DOUBLE_EQ(optimizer_update(s).bytes_per_weight, 20);
  // An optimizer whose foreach sequence is not known is refused, not guessed.
  s.optimizer_kernels = OptimizerKernels::Foreach;
  s.optimizer_bytes = 12;
  EXPECT_THROW(optimizer_update(s), std::invalid_argument);
}

TEST(Roofline, TinyNetworksAreLaunchBound) {
  // The quickstart's MLP (784-256-128-10) on 32 samples: 15 MFLOP at 100 TFLOP/s is 0.15 us, while its
  // 3 layers launch 9 kernels a step and 3 optimizer kernels: 60 us of launches against 7 us for the
  // optimizer's 7 MB of state and well under a microsecond for the products.
  Workload w;
  for (const auto& [in, out] : std::vector<std::pair<double, double>>{{784, 256}, {256, 128}, {128, 10}})
    w.layers.push_back(linear(2 * in * out, static_cast<std::uint64_t>(in * out + out), in + out));
  MemorySetup s;
  s.micro_batch = 32;
  const StepCompute t = step_compute(w, s, kDevice);
  EXPECT_DOUBLE_EQ(t.launches, 12 * 5e-6);
  EXPECT_GT(t.launches / t.total(), 0.85);
  EXPECT_LT(t.compute_bound, 1e-6);
}

TEST(KernelIssue, APassTakesTheLongerOfItsGpuTimeAndTheHostsDispatch) {
  // Two layers, hand-drawn. The host spends 5 us launching and 10 us dispatching per kernel, 15 us a kernel;
  // the GPU spends each kernel's work plus its 5 us launch.
  //   big:   1 kernel forward, 800 us of FLOPs (8 samples x 10 GFLOP at 100 TFLOP/s): GPU 805 us > host 15 us.
  //   small: 1 kernel forward, 8 x 1 MFLOP = 0.08 us of FLOPs (bytes: 2 x (1000 + 8 x 100) = 3.6 KB,
  //          0.0036 us): GPU 5.08 us < host 15 us, so the GPU waits for the host.
  DeviceRates eager = kDevice;
  eager.issue.host_dispatch = 10e-6;
  const LayerCost big = linear(1e10, 1000, 100), small = linear(1e6, 1000, 100);
  EXPECT_DOUBLE_EQ(layer_forward_seconds(big, 8, 2, eager), 8e10 / 100e12 + 5e-6);
  EXPECT_NEAR(layer_forward_seconds(small, 8, 2, eager), 15e-6, 1e-18);
  // Backward: 2 kernels each. big: 1600 us + 10 us; small: the host's 2 x 15 us.
  EXPECT_DOUBLE_EQ(layer_backward_seconds(big, 8, 2, eager), 16e10 / 100e12 + 10e-6);
  EXPECT_NEAR(layer_backward_seconds(small, 8, 2, eager), 30e-6, 1e-18);
  // Without dispatch the same layers are the roofline plus launches, as before the key existed.
  EXPECT_DOUBLE_EQ(layer_forward_seconds(small, 8, 2, kDevice), 8e6 / 100e12 + 5e-6);

  // The whole step: 6 forward and backward kernels and 2 fused optimizer kernels, one per trained layer. The
  // host's excess over the GPU is the small layer's (15 - 5.08) + (30 - 10.16) us and the optimizer's, whose
  // 2 kernels at 15 us outweigh its 2 launches and a few KB of traffic.
  Workload w;
  w.layers = {big, small};
  MemorySetup s;
  s.micro_batch = 8;
  const StepCompute plain = step_compute(w, s, kDevice), dispatched = step_compute(w, s, eager);
  EXPECT_EQ(dispatched.kernels, 8);
  EXPECT_DOUBLE_EQ(dispatched.launches, 8 * 5e-6);
  EXPECT_NEAR(dispatched.total() - plain.total(), dispatched.host_bound, 1e-15);
  EXPECT_NEAR(dispatched.forward, 805e-6 + 15e-6, 1e-12);
  EXPECT_NEAR(dispatched.backward, 1610e-6 + 30e-6, 1e-12);
  EXPECT_NEAR(dispatched.optimizer, 30e-6, 1e-12);
}

TEST(KernelIssue, ACudaGraphChargesTheKernelsWorkAlone) {
  DeviceRates graphed = kDevice;
  graphed.issue.cuda_graphs = true;
  graphed.issue.host_dispatch = 10e-6;  // replayed from the graph: never paid
  const LayerCost big = linear(1e10, 1000, 100), small = linear(1e6, 1000, 100);
  EXPECT_DOUBLE_EQ(layer_forward_seconds(big, 8, 2, graphed), 8e10 / 100e12);
  EXPECT_DOUBLE_EQ(layer_forward_seconds(small, 8, 2, graphed), 8e6 / 100e12);
  Workload w;
  w.layers = {big, small};
  MemorySetup s;
  s.micro_batch = 8;
  const StepCompute t = step_compute(w, s, graphed);
  EXPECT_DOUBLE_EQ(t.launches, 0);
  EXPECT_DOUBLE_EQ(t.host_bound, 0);
  EXPECT_NEAR(t.total(), t.compute_bound + t.memory_bound, 1e-15);
  DeviceRates negative = kDevice;
  negative.issue.host_dispatch = -1e-6;
  EXPECT_THROW(step_compute(w, s, negative), std::invalid_argument);
}

TEST(Roofline, ModelFlopsUtilisation) {
  Workload w;
  w.layers = {linear(1e9, 1, 0)};  // 3 GFLOP per sample, forward and backward
  EXPECT_DOUBLE_EQ(model_flops_utilisation(w, 10, 1.0, 100e9), 0.3);
  // Work done again in the backward pass (FlashAttention's rebuilt scores) is executed but not model FLOPs.
  w.layers.back().backward_flops += 1e9;
  w.layers.back().rebuilt_in_backward = 1e9;
  EXPECT_DOUBLE_EQ(w.training_flops(), 4e9);
  EXPECT_DOUBLE_EQ(model_flops_utilisation(w, 10, 1.0, 100e9), 0.3);
  EXPECT_THROW(step_compute(w, MemorySetup{}, DeviceRates{0, 1, 0}), std::invalid_argument);
  EXPECT_THROW(step_compute(w, MemorySetup{}, DeviceRates{1, -1, 0}), std::invalid_argument);
}

TEST(Roofline, WithoutABandwidthOnlyFlopsAndLaunchesCount) {
  const LayerCost l = linear(1e9, 1'000'000, 1e12);  // a huge traffic that would dominate at any bandwidth
  EXPECT_DOUBLE_EQ(layer_forward_seconds(l, 2, 2, DeviceRates{100e12, 0, 5e-6}), 2e9 / 100e12 + 5e-6);
}

TEST(GradientTimeline, SegmentsEndAtTrainedLayersAndAddUpToTheStep) {
  // LoRA: most layers are frozen; their backward time (and the loss's, and checkpointing's recomputation)
  // belongs to the next trained layer the backward pass reaches, so the parts add up to the whole step.
  const Workload w = find_workload("llama-7b-lora", DTSIM_WORKLOAD_DIR);
  MemorySetup s;
  s.micro_batch = 2;
  s.checkpointing = true;
  const DeviceRates a100{312e12, 2.039e12, 5e-6};
  const GradientTimeline t = gradient_timeline(w, s, a100);
  const StepCompute whole = step_compute(w, s, a100);
  int trained = 0;
  for (const LayerCost& l : w.layers) trained += l.trainable > 0;
  ASSERT_EQ(static_cast<int>(t.backward.size()), trained);
  EXPECT_EQ(t.trained_layers.size(), t.backward.size());
  for (size_t i = 1; i < t.trained_layers.size(); ++i) EXPECT_LT(t.trained_layers[i], t.trained_layers[i - 1]);
  EXPECT_NEAR(t.forward, whole.forward, 1e-12 * whole.forward);
  EXPECT_NEAR(t.backward_total(), whole.backward + whole.recompute, 1e-9 * whole.backward);
  EXPECT_NEAR(t.optimizer, whole.optimizer, 1e-15);
  EXPECT_NEAR(t.total(), whole.total(), 1e-9 * whole.total());
}

TEST(GradientTimeline, BackwardAfterTheLastGradientIsTheTail) {
  // A frozen first layer (LoRA's embedding): its backward runs after every gradient is complete.
  Workload w;
  w.layers = {linear(1e9, 10, 0), linear(3e9, 10, 0)};
  w.layers[0].trainable = 0;
  const GradientTimeline t = gradient_timeline(w, MemorySetup{}, kDevice);
  ASSERT_EQ(t.backward.size(), 1u);
  EXPECT_EQ(t.trained_layers[0], 1);
  EXPECT_DOUBLE_EQ(t.backward[0], 6e9 / 100e12 + 2 * 5e-6);
  EXPECT_DOUBLE_EQ(t.tail, 2e9 / 100e12 + 2 * 5e-6);
  EXPECT_DOUBLE_EQ(t.forward, 4e9 / 100e12 + 2 * 5e-6);
  EXPECT_DOUBLE_EQ(t.backward_total(), t.backward[0] + t.tail);
}

TEST(NetworkWorkload, TheQuickstartMlpLayerByLayer) {
  const auto net = make_mlp<float>(784, {256, 128}, 10);
  const Workload w = network_workload(*net, "mlp");
  // dense, relu, dense, relu, dense, then the loss.
  ASSERT_EQ(w.layers.size(), 6u);
  EXPECT_EQ(w.layers[0].kind, "linear");
  EXPECT_EQ(w.layers[1].kind, "activation");
  EXPECT_EQ(w.layers[5].kind, "loss");
  EXPECT_EQ(w.trainable(), 235146u);
  EXPECT_DOUBLE_EQ(w.forward_flops(), net->forward_flops_per_sample());
  EXPECT_DOUBLE_EQ(w.backward_flops(), net->backward_flops_per_sample());
  int forward = 0, backward = 0;
  for (const LayerCost& l : w.layers) {
    forward += l.forward_kernels;
    backward += l.backward_kernels;
  }
  // Dense: GEMM + bias forward; weight GEMM, bias reduction and input GEMM backward (the first layer has no
  // input gradient). ReLU and the fused softmax cross-entropy: one kernel each way.
  EXPECT_EQ(forward, 3 * 2 + 2 + 1);
  EXPECT_EQ(backward, 2 + 3 + 3 + 2 + 1);
  // The first layer reads its 784 inputs and writes 256 outputs; backward reads the output gradient and the
  // input, and writes no input gradient.
  EXPECT_DOUBLE_EQ(w.layers[0].forward_traffic, 784 + 256);
  EXPECT_DOUBLE_EQ(w.layers[0].backward_traffic, 256 + 784);
  EXPECT_DOUBLE_EQ(w.layers[2].backward_traffic, 128 + 256 + 256);
}

// ---- compute.matmul = tiles: products timed from their shapes ------------------------------------------

double product_flops(const std::vector<LayerProduct>& products, double samples) {
  double sum = 0;
  for (const LayerProduct& p : products) sum += p.for_samples(samples).flops();
  return sum;
}

TEST(TiledProducts, EveryCatalogLayerSProductsAddUpToItsFlops) {
  // The shapes are a second description of the same work: for 1 and 4 samples their FLOPs must equal the
  // layer's (both passes), or the two models would time different jobs. FlashAttention kernels have none.
  for (const std::string& name : catalog_names(DTSIM_WORKLOAD_DIR)) {
    const Workload w = find_workload(name, DTSIM_WORKLOAD_DIR);
    int with_products = 0;
    for (const LayerCost& l : w.layers) {
      if (l.forward_products.empty() && l.backward_products.empty()) continue;
      ++with_products;
      for (const double samples : {1.0, 4.0}) {
        EXPECT_NEAR(product_flops(l.forward_products, samples), samples * l.forward_flops, 1e-9 * samples * l.forward_flops)
            << name << " " << l.name;
        EXPECT_NEAR(product_flops(l.backward_products, samples), samples * l.backward_flops,
                    1e-9 * samples * l.backward_flops)
            << name << " " << l.name;
      }
    }
    EXPECT_GT(with_products, 0) << name;
  }
}

TEST(TiledProducts, ALinearLayerTakesItsThreeProductsOneAfterAnother) {
  // 2048 tokens per sample, 4096 → 4096, one sample, 2-byte elements, on 132 SMs at 1 TFLOP/s each with
  // 128 × 256 tiles: forward 16 × 16 = 256 tiles, two waves of 2 × 128 × 256 × 4096 ps (the 128 × 128 tile
  // needs 512 tiles, four waves of half the time at 3/4 of the rate: slower); the input gradient is the same
  // shape, and the weight gradient (4096 × 4096 over 2048) 512 tiles, four waves of half the k: two waves'
  // worth again. Memory is far below.
  const Workload w = find_workload("llama-7b", DTSIM_WORKLOAD_DIR);
  LayerCost l;
  for (const LayerCost& c : w.layers)
    if (c.name == "block0.attention.o") l = c;
  ASSERT_EQ(l.forward_products.size(), 1u);
  DeviceRates d{1e15, 1e15, 0};
  d.matmul.multiprocessors = 132;
  d.matmul.tile_m = 128;
  d.matmul.tile_n = 256;
  d.matmul.large_product_flops = 132e12;
  d.matmul.memory_bandwidth = 1e15;
  const double tokens = w.tokens_per_sample;
  ASSERT_EQ(tokens, 2048);
  const double wave = 2.0 * 128 * 256 * 4096 / 1e12;
  EXPECT_NEAR(layer_forward_seconds(l, 1, 2, d), 2 * wave, 1e-12);
  EXPECT_NEAR(layer_backward_seconds(l, 1, 2, d), 2 * wave + 4 * wave / 2, 1e-12);
  // Without the unit the same layer is FLOPs at the rate: 2 × 2048 × 4096² at 1 PFLOP/s.
  EXPECT_NEAR(layer_forward_seconds(l, 1, 2, DeviceRates{1e15, 1e15, 0}), 2.0 * 2048 * 4096 * 4096 / 1e15, 1e-15);
}

TEST(TiledProducts, AUnitWithoutARateIsRefused) {
  DeviceRates d{1e15, 1e12, 0};
  d.matmul.multiprocessors = 132;
  EXPECT_THROW(step_compute(find_workload("resnet50", DTSIM_WORKLOAD_DIR), MemorySetup{}, d), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::models
