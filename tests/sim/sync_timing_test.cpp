// Timing-only synchronous data parallelism (sim/strategies/timing/sync_timing.hpp) against closed forms on a
// contention-free star: one worker is its compute alone; without overlap, N workers add each bucket's ring
// allreduce, 2(N-1)(alpha + S / (N B)); with overlap, only what backward does not hide.
#include <gtest/gtest.h>

#include "sim/collectives/collective.hpp"
#include "sim/strategies/timing/sync_timing.hpp"
#include "sim/world/build_platform.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

constexpr double kSpeed = 1e12;  // FLOP/s of every host: 1e9 FLOPs take 1 ms
const FabricSpec kFabric{"ideal 25 GB/s, 1 us links", 25e9, 1e-6, 0.0, 1.0};

// Steps of a spec on `ranks` workers; returns the step end times, then compute and exposed per step, buckets.
std::vector<double> simulate(int ranks, const TimingSpec& spec) {
  return dtsim::testing::from_bytes<double>(dtsim::testing::run_in_child([&] {
    auto engine = create_engine({NetworkModel::Cm02, false});
    const Platform p = build_star(ranks, kSpeed, kFabric);
    install_fabric_calibration(*engine, kFabric);
    const TimingOutcome t = run_sync_timing(p, spec, [&p](CollectiveKind kind, const std::string& name) {
      return make_collective(kind, Algorithm::Ring, Fidelity::Stepwise, p, name);
    });
    std::vector<double> out = t.step_end_s;
    out.push_back(t.compute_s);
    out.push_back(t.exposed_s);
    out.push_back(t.buckets);
    return dtsim::testing::to_bytes(out);
  }));
}

// Forward 2 ms; backward in two segments of 1 ms, each 10 M values (20 MB in bf16); optimizer 0.5 ms.
TimingSpec two_buckets(bool overlap) {
  TimingSpec s;
  s.forward_flops = 2e9;
  s.segments = {{10'000'000, 10'000'000, 1e9}, {0, 10'000'000, 1e9}};
  s.optimizer_flops = 0.5e9;
  s.bytes_per_value = 2;
  s.bucket_bytes = 20e6;  // one segment per bucket
  s.overlap = overlap;
  s.steps = 3;
  return s;
}

double ring_seconds(int n, double bytes) {
  const double alpha = 2 * 1e-6;  // two links, no switch latency
  return 2.0 * (n - 1) * (alpha + bytes / (n * 25e9));
}

TEST(SyncTiming, OneWorkerIsItsComputeAlone) {
  const auto r = simulate(1, two_buckets(true));
  ASSERT_EQ(r.size(), 3u + 3);
  EXPECT_EQ(r[5], 2);  // buckets
  for (int s = 0; s < 3; ++s) EXPECT_NEAR(r[s], (s + 1) * 4.5e-3, 1e-12) << "step " << s;
  EXPECT_NEAR(r[3], 4.5e-3, 1e-12);  // compute per step
  EXPECT_NEAR(r[4], 0, 1e-12);       // nothing exposed
}

TEST(SyncTiming, WithoutOverlapEveryAllreduceIsExposed) {
  const int n = 4;
  const auto r = simulate(n, two_buckets(false));
  const double step = 4.5e-3 + 2 * ring_seconds(n, 20e6);
  EXPECT_NEAR(r[0], step, 1e-3 * step);
  EXPECT_NEAR(r[2] - r[1], step, 1e-3 * step);
  EXPECT_NEAR(r[4], 2 * ring_seconds(n, 20e6), 1e-3 * step);
}

TEST(SyncTiming, OverlapHidesTheFirstBucketBehindBackward) {
  // The first bucket's allreduce (4.8 ms at N = 4) starts after 1 ms of backward and overlaps the second
  // millisecond; the second bucket's waits for the first's: exposed = 2 ring times - 1 ms of overlap.
  const int n = 4;
  const auto r = simulate(n, two_buckets(true));
  const double ring = ring_seconds(n, 20e6);
  const double exposed = 2 * ring - 1e-3;
  EXPECT_NEAR(r[4], exposed, 1e-3 * exposed);
  EXPECT_NEAR(r[2] - r[1], 4.5e-3 + exposed, 1e-3 * (4.5e-3 + exposed));
}

TEST(SyncTiming, FrozenTailRunsAfterTheLastBucket) {
  // LoRA's frozen embedding: backward work with no trained values after the last bucket; one worker.
  TimingSpec s = two_buckets(true);
  s.segments.push_back({0, 0, 3e9});
  const auto r = simulate(1, s);
  EXPECT_EQ(r.back(), 2);
  EXPECT_NEAR(r[0], 7.5e-3, 1e-12);
}

TEST(SyncTiming, ZeroReduceScattersBucketsAndAllGathersTheWeights) {
  // ZeRO-2 without overlap on 4 ranks: each bucket's ring reduce-scatter (N - 1)(alpha + S / (N B)), the
  // optimizer on the shard, then the ring all-gather of 20 M weights in bf16 (40 MB).
  const int n = 4;
  TimingSpec s = two_buckets(false);
  s.zero_stage = 2;
  s.optimizer_flops = 0.5e9 / n;  // the caller gives this worker's shard's update
  s.gathered_bytes = 40e6;
  const auto r = simulate(n, s);
  const auto half_ring = [&](double bytes) { return (n - 1) * (2e-6 + bytes / (n * 25e9)); };
  const double step = 4e-3 + 0.5e-3 / n + 2 * half_ring(20e6) + half_ring(40e6);
  EXPECT_NEAR(r[2] - r[1], step, 1e-3 * step);
  EXPECT_NEAR(r[4], 2 * half_ring(20e6) + half_ring(40e6), 1e-3 * step);  // exposed: all three
  // Against the two allreduces (each a reduce-scatter and an all-gather of its 20 MB): the same bytes, one
  // all-gather's latency fewer, and 3/4 of the optimizer saved.
  const auto plain = simulate(n, two_buckets(false));
  EXPECT_NEAR(r[2] - r[1], plain[2] - plain[1] - 0.5e-3 * (n - 1) / n - (n - 1) * 2e-6, 1e-6);
}

}  // namespace
}  // namespace dtsim::sim
