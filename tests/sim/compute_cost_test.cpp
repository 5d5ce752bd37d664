// A run's compute time: the per-layer roofline with launch overhead (sim/strategies/compute_cost.hpp),
// checked on one worker (no communication) against the closed form written out layer by layer for the
// quickstart's MLP 784-256-128-10.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/network.hpp"
#include "models/workload/network_workload.hpp"
#include "sim/collectives/registry.hpp"
#include "sim/config/platform_spec.hpp"
#include "sim/strategies/compute_cost.hpp"
#include "sim/strategies/timing/sync_timing.hpp"
#include "sim/world/build_platform.hpp"
#include "tests/sim/training_support.hpp"

namespace dtsim::testing {
namespace {

struct Pass {
  double flops, bytes;  // per step (the whole batch)
  int kernels;
};

// One step of the MLP at batch b on a GPU of `rate` FLOP/s, `bandwidth` bytes/s and `launch` s per kernel,
// fp32 everywhere, SGD with momentum: each pass max(FLOPs / rate, bytes / bandwidth) + kernels × launch.
double mlp_step_seconds(double b, double rate, double bandwidth, double launch) {
  const double e = 4;
  const double w0 = 784 * 256 + 256, w1 = 256 * 128 + 128, w2 = 128 * 10 + 10;
  const Pass passes[] = {
      // forward: dense (GEMM + bias), ReLU, ..., softmax cross-entropy (4 FLOPs per class)
      {b * (2 * 784 * 256 + 256), e * (w0 + b * (784 + 256)), 2},
      {b * 256, e * b * (256 + 256), 1},
      {b * (2 * 256 * 128 + 128), e * (w1 + b * (256 + 128)), 2},
      {b * 128, e * b * (128 + 128), 1},
      {b * (2 * 128 * 10 + 10), e * (w2 + b * (128 + 10)), 2},
      {b * 40, e * b * 20, 1},
      // backward: the loss (2 FLOPs per class), then each layer reads its output gradient and its input and
      // writes its input gradient (not the first layer's); a dense layer reads its weights and writes their
      // gradient, in three kernels (two for the first layer)
      {b * 20, e * b * 20, 1},
      {b * (4 * 128 * 10 + 10), e * (2 * w2 + b * (10 + 128 + 128)), 3},
      {b * 128, e * b * 3 * 128, 1},
      {b * (4 * 256 * 128 + 128), e * (2 * w1 + b * (128 + 256 + 256)), 3},
      {b * 256, e * b * 3 * 256, 1},
      {b * (2 * 784 * 256 + 256), e * (2 * w0 + b * (256 + 784)), 2},
  };
  double seconds = 0;
  for (const Pass& p : passes)
    seconds += std::max(p.flops / rate, bandwidth > 0 ? p.bytes / bandwidth : 0.0) + p.kernels * launch;
  // The update: gradient read, weight read and written, momentum read and written (4 bytes each), one kernel
  // per dense layer.
  const double n = w0 + w1 + w2;
  return seconds + (bandwidth > 0 ? 20 * n / bandwidth : 0.0) + 3 * launch;
}

RunReport one_worker_run(double bandwidth, double launch, int steps) {
  return run_and_report([&] {
    return small_training_run(1, 32, steps, [&](sim::RunConfig& c) {
      c.gpu.memory_bandwidth = bandwidth;
      c.gpu.launch_overhead = launch;
    });
  });
}

TEST(ComputeCost, OneWorkerStepIsTheRooflineOfEveryLayerPlusItsLaunches) {
  // test-gpu: 10 TFLOP/s at efficiency 0.5.
  const double rate = 5e12, bandwidth = 1.5e12, launch = 5e-6;
  const RunReport r = one_worker_run(bandwidth, launch, 6);
  ASSERT_EQ(r.steps, 6);
  const double step = mlp_step_seconds(32, rate, bandwidth, launch);
  EXPECT_NEAR(r.simulated_time, 6 * step, 1e-9 * 6 * step);
  EXPECT_NEAR(r.compute, r.simulated_time, 1e-12);
  // The launches alone are 23 × 5 µs of the ~130 µs step: a tiny MLP is launch-bound on a real GPU.
  EXPECT_GT(23 * launch / step, 0.8);
}

TEST(ComputeCost, TilesChargeMemoryTrafficAtTheMeasuredStreamingFractionOfTheBandwidth) {
  // compute.matmul = tiles: the MLP's layers have no product shapes, so their FLOPs run at the achievable rate
  // (5 TFLOP/s here), and every byte at memory_bandwidth × memory_efficiency (a streaming benchmark's share of
  // the datasheet's). The same closed form as above, at 0.6 × 1.5 TB/s; the roofline keeps the datasheet's.
  const double rate = 5e12, bandwidth = 1.5e12, efficiency = 0.6, launch = 5e-6;
  const auto run = [&](sim::MatmulModel model) {
    return run_and_report([&] {
      return small_training_run(1, 32, 3, [&](sim::RunConfig& c) {
        c.gpu.memory_bandwidth = bandwidth;
        c.gpu.memory_efficiency = efficiency;
        c.gpu.launch_overhead = launch;
        c.gpu.multiprocessors = 100;
        c.gpu.achievable_fp32 = rate;
        c.matmul = model;
      });
    });
  };
  const RunReport tiles = run(sim::MatmulModel::Tiles);
  const double step = mlp_step_seconds(32, rate, efficiency * bandwidth, launch);
  EXPECT_NEAR(tiles.simulated_time, 3 * step, 1e-9 * 3 * step);
  // test-gpu's roofline: 10 TFLOP/s at efficiency 0.5, bytes at the full 1.5 TB/s.
  const RunReport roofline = run(sim::MatmulModel::Roofline);
  EXPECT_NEAR(roofline.simulated_time, 3 * mlp_step_seconds(32, rate, bandwidth, launch), 1e-9 * roofline.simulated_time);
  EXPECT_GT(tiles.simulated_time, roofline.simulated_time);  // the MLP's small layers are memory-bound
}

TEST(ComputeCost, WithoutBandwidthOrLaunchCostAStepIsItsFlopsAtTheSustainedRate) {
  const RunReport r = one_worker_run(0, 0, 4);
  const double b = 32;
  const double flops = b * ((2 * 784 * 256 + 256) + 256 + (2 * 256 * 128 + 128) + 128 + (2 * 128 * 10 + 10) + 40) +
                       b * (20 + (4 * 128 * 10 + 10) + 128 + (4 * 256 * 128 + 128) + 256 + (2 * 784 * 256 + 256));
  EXPECT_NEAR(r.simulated_time, 4 * flops / 5e12, 1e-9 * r.simulated_time);
  EXPECT_NEAR(mlp_step_seconds(32, 5e12, 0, 0), flops / 5e12, 1e-15);
}

TEST(ComputeCost, LaunchOverheadAddsTheSameTimeToEveryWorkerOfASynchronousJob) {
  // Four workers: the step grows by exactly the extra launches, since every worker's compute grows alike
  // and the allreduce is unchanged.
  const auto run = [](double launch) {
    return run_and_report([&] {
      return small_training_run(4, 32, 5, [&](sim::RunConfig& c) { c.gpu.launch_overhead = launch; });
    });
  };
  const RunReport base = run(0), slow = run(20e-6);
  EXPECT_NEAR(slow.simulated_time - base.simulated_time, 5 * 23 * 20e-6, 1e-9);
  EXPECT_NEAR(slow.communication, base.communication, 1e-9);
}

TEST(ComputeCost, TimingOnlyAndNumericsGiveTheSameSimulatedTime) {
  // The same MLP on the same 8-worker cluster: once trained for real (sync strategy, numerics), once with the
  // timing-only strategy fed by the network's per-layer costs. Buckets of 100 kB split the gradient (the last
  // two layers, then the first), so the allreduces overlap the backward pass in both; the same with ZeRO 2
  // (reduce-scatters, the weights' all-gather) and 3 (the units' gathers in forward and backward).
  const int workers = 8, steps = 4;
  for (const int stage : {0, 2, 3}) {
    const auto adjust = [stage](sim::RunConfig& c) {
      c.gpu.memory_bandwidth = 1.5e12;
      c.gpu.launch_overhead = 5e-6;
      c.sync.bucket_bytes = 100e3;
      c.sync.zero_stage = stage;
    };
    const RunReport numerics = run_and_report([&] { return small_training_run(workers, 32, steps, adjust); });
    const std::vector<double> timing = from_bytes<double>(run_in_child([&] {
      const sim::RunInputs in = small_training_run(workers, 32, steps, adjust);
      const sim::RunConfig& cfg = in.config;
      auto engine = sim::create_engine(sim::network_settings(sim::platform_spec(cfg)));
      const sim::Platform platform = sim::build_platform(*engine, sim::platform_spec(cfg));
      const auto net = models::make_mlp<float>(784, {256, 128}, 10);
      sim::TimingSpec spec = sim::timing_spec(models::network_workload(*net, "mlp"), sim::run_memory_setup(cfg),
                                              sim::run_device_rates(cfg.gpu, cfg.math, cfg.matmul, cfg.kernel_issue),
                                              platform.workers.front()->get_speed());
      spec.steps = steps;
      spec.bucket_bytes = cfg.sync.bucket_bytes;
      spec.overlap = cfg.sync.overlap;
      const sim::TimingOutcome t =
          sim::run_sync_timing(platform, spec, [&](sim::CollectiveKind kind, const std::string& name) {
            // As the sync strategy makes them: ZeRO's reduce-scatters and all-gathers are rings.
            const sim::Algorithm algorithm =
                kind == sim::CollectiveKind::Allreduce ? cfg.collectives.algorithm : sim::Algorithm::Ring;
            return sim::make_collective(kind, algorithm, cfg.collectives.fidelity, platform, name,
                                        collective_options(cfg));
          });
      return to_bytes(std::vector<double>{t.step_end_s.back(), static_cast<double>(t.buckets),
                                          static_cast<double>(t.bytes_sent)});
    }));
    EXPECT_GT(timing[1], 1) << stage;  // several buckets
    EXPECT_NEAR(timing[0], numerics.simulated_time, 1e-9 * numerics.simulated_time) << "stage " << stage;
    EXPECT_DOUBLE_EQ(timing[2], numerics.bytes) << "stage " << stage;
  }
}

}  // namespace
}  // namespace dtsim::testing
