// Timing-only synchronous data parallelism (sim/strategies/timing/sync_timing.hpp) against closed forms on a
// contention-free star: one worker is its compute alone; without overlap, N workers add each bucket's ring
// allreduce, 2(N-1)(alpha + S / (N B)); with overlap, only what backward does not hide.
#include <gtest/gtest.h>

#include "sim/collectives/collective.hpp"
#include "sim/strategies/sync/weight_gathers.hpp"
#include "sim/strategies/timing/sync_timing.hpp"
#include "sim/world/build_platform.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

constexpr double kSpeed = 1e12;  // FLOP/s of every host: 1e9 FLOPs take 1 ms
const FabricSpec kFabric{"ideal 25 GB/s, 1 us links", 25e9, 1e-6, 0.0, 1.0};

// Steps of a spec on `ranks` workers; returns the step end times, then compute and exposed per step, buckets,
// bytes sent, and whether rank 0 stood in for the others.
std::vector<double> simulate(int ranks, const TimingSpec& spec, Fidelity fidelity = Fidelity::Stepwise) {
  return dtsim::testing::from_bytes<double>(dtsim::testing::run_in_child([&] {
    auto engine = create_engine({NetworkModel::Cm02, false});
    const Platform p = build_star(ranks, kSpeed, kFabric);
    install_fabric_calibration(*engine, kFabric);
    const TimingOutcome t = run_sync_timing(p, spec, [&](CollectiveKind kind, const std::string& name) {
      return make_collective(kind, Algorithm::Ring, fidelity, p, name);
    });
    std::vector<double> out = t.step_end_s;
    out.push_back(t.compute_s);
    out.push_back(t.exposed_s);
    out.push_back(t.buckets);
    out.push_back(static_cast<double>(t.bytes_sent));
    out.push_back(t.one_rank_for_all ? 1 : 0);
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
  ASSERT_EQ(r.size(), 3u + 5);
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

TEST(SyncTiming, AccumulationRunsTheEarlierMicroBatchesWithoutCommunicating) {
  // Three micro-batches: two forward and backward passes of 4 ms each (2 + 1 + 1, a frozen tail's 3 ms too)
  // before the last, which overlaps its buckets as before. So the step is 2 × 7 ms longer than without, the
  // exposed communication the same, and the bytes those of one step's buckets.
  const int n = 4;
  TimingSpec s = two_buckets(true);
  s.segments.push_back({0, 0, 3e9});
  const auto one = simulate(n, s);
  s.micro_batches = 3;
  const auto three = simulate(n, s);
  EXPECT_NEAR((three[2] - three[1]) - (one[2] - one[1]), 2 * 7e-3, 1e-9);
  EXPECT_NEAR(three[3], one[3] + 2 * 7e-3, 1e-12) << "compute per step";
  EXPECT_NEAR(three[4], one[4], 1e-12) << "exposed communication";
  EXPECT_EQ(three[6], one[6]) << "bytes";
  // On one worker it is its compute alone: 3 × (2 + 2 + 3) ms + 0.5 ms.
  EXPECT_NEAR(simulate(1, s)[0], 3 * 7e-3 + 0.5e-3, 1e-12);
}

TEST(SyncTiming, FrozenTailRunsAfterTheLastBucket) {
  // LoRA's frozen embedding: backward work with no trained values after the last bucket; one worker.
  TimingSpec s = two_buckets(true);
  s.segments.push_back({0, 0, 3e9});
  const auto r = simulate(1, s);
  EXPECT_EQ(r[5], 2);
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

// ZeRO-3 on 4 ranks without overlap: every unit's weights (20 MB each) are all-gathered before its forward
// and again before its backward, one unit ahead. The first gather of each pass is exposed, the second hides
// behind the first unit's 1 ms of compute (a gather takes 0.6 ms); the two reduce-scatters come after
// backward; no all-gather after the step. Bytes: 4 gathers and 2 reduce-scatters of 20 MB, 1.5 times the
// two allreduces of plain data parallelism.
TimingSpec zero3(bool overlap) {
  TimingSpec s = two_buckets(overlap);
  s.zero_stage = 3;
  s.optimizer_flops = 0.5e9 / 4;
  s.segment_forward_flops = {1e9, 1e9};
  s.segment_gather_bytes = {20e6, 20e6};
  return s;
}

TEST(SyncTiming, ZeroStage3GathersEachUnitBeforeItsForwardAndItsBackward) {
  const int n = 4;
  const auto half_ring = [&](double bytes) { return (n - 1) * (2e-6 + bytes / (n * 25e9)); };
  const auto r = simulate(n, zero3(false));
  const double exposed = 2 * half_ring(20e6) + 2 * half_ring(20e6);
  const double step = 4e-3 + 0.5e-3 / n + exposed;
  EXPECT_NEAR(r[2] - r[1], step, 1e-3 * step);
  EXPECT_NEAR(r[3], 4e-3 + 0.5e-3 / n, 1e-12);  // compute per step
  EXPECT_NEAR(r[4], exposed, 1e-3 * step);
  const auto plain = simulate(n, two_buckets(false));
  EXPECT_DOUBLE_EQ(r[6], 1.5 * plain[6]);  // bytes
  // With overlap the first bucket's reduce-scatter hides behind the second bucket's backward.
  const auto overlapped = simulate(n, zero3(true));
  EXPECT_NEAR(overlapped[2] - overlapped[1], step - half_ring(20e6), 1e-3 * step);
}

// ZeRO-3 with two micro-batches, no overlap: no worker holds the whole weights between them, so each
// micro-batch runs the timeline above (its own gathers, forward and backward, and its reduce-scatters, done
// before the next micro-batch starts), and the optimizer steps once: 2 (4 ms + 4 half rings) + 0.125 ms,
// twice the bytes.
TEST(SyncTiming, ZeroStage3AccumulationGathersAndReduceScattersEveryMicroBatch) {
  const int n = 4;
  const auto half_ring = [&](double bytes) { return (n - 1) * (2e-6 + bytes / (n * 25e9)); };
  TimingSpec s = zero3(false);
  const auto one = simulate(n, s);
  s.micro_batches = 2;
  const auto two = simulate(n, s);
  const double step = 2 * (4e-3 + 4 * half_ring(20e6)) + 0.5e-3 / n;
  EXPECT_NEAR(two[2] - two[1], step, 1e-3 * step);
  EXPECT_NEAR(two[3], 2 * 4e-3 + 0.5e-3 / n, 1e-12);  // compute per step
  EXPECT_NEAR(two[4], 8 * half_ring(20e6), 1e-3 * step);
  EXPECT_DOUBLE_EQ(two[6], 2 * one[6]);  // bytes
  // On one worker it is its compute alone.
  EXPECT_NEAR(simulate(1, s)[0], 2 * 4e-3 + 0.5e-3 / n, 1e-12);
}

// sync.prefetch_units on three units of 20 MB whose forward is 3 ms for the first computed (unit 2) and 0.1 ms
// for the others, backward 3 ms each, no overlap. One unit ahead: units 2 and 1 are queued at the start, unit 0
// only when unit 1 starts, so its gather (half a ring, 0.606 ms) is exposed but for unit 1's 0.1 ms. Two ahead:
// all three are queued at the start and done within unit 2's 3 ms. The backward is the same for both (its
// first gather is exposed, the others hide behind 3 ms), so the step is half a ring less 0.1 ms shorter.
TEST(SyncTiming, ZeroStage3PrefetchesAsManyUnitsAheadAsAsked) {
  const int n = 4;
  const auto half_ring = [&](double bytes) { return (n - 1) * (2e-6 + bytes / (n * 25e9)); };
  TimingSpec s = zero3(false);
  s.segments = {{0, 10'000'000, 3e9}, {10'000'000, 10'000'000, 3e9}, {20'000'000, 10'000'000, 3e9}};
  s.segment_forward_flops = {0.1e9, 0.1e9, 3e9};  // backward order: unit 2 is the first layer's, computed first
  s.segment_gather_bytes = {20e6, 20e6, 20e6};
  s.forward_flops = 3.2e9;
  const auto one = simulate(n, s);
  s.prefetch_units = 2;
  const auto two = simulate(n, s);
  EXPECT_EQ(one[5], 3);  // buckets
  EXPECT_NEAR((one[2] - one[1]) - (two[2] - two[1]), half_ring(20e6) - 0.1e-3, 1e-6);
  EXPECT_DOUBLE_EQ(one[6], two[6]);  // the same bytes, sent earlier
  // Beyond the units there are, nothing more to queue.
  s.prefetch_units = 8;
  EXPECT_NEAR(simulate(n, s)[2] - simulate(n, s)[1], two[2] - two[1], 1e-12);
}

// ZeRO-3's units are runs of at least sync.bucket_size of weights inside each bucket (and the tail): with every
// weight trained a unit is its bucket; a bucket of few trained values (LoRA) spanning many layers is cut, so
// that no unit holds the whole model (a LLaMA-7B LoRA bucket was gathered as one 13.5 GB piece).
TEST(SyncTiming, WeightUnitsAreCutByWeightBytesWithinEachBucket) {
  const auto shape = [](const std::vector<Bucket>& units) {
    std::vector<std::pair<size_t, size_t>> out;
    for (const Bucket& u : units) out.push_back({u.first_segment, u.segments});
    return out;
  };
  const auto bucket = [](size_t first, size_t count) {
    Bucket b;
    b.first_segment = first;
    b.segments = count;
    return b;
  };
  using Shape = std::vector<std::pair<size_t, size_t>>;
  // One bucket over four layers of 10 bytes, units of at least 15: two of two layers.
  EXPECT_EQ(shape(weight_units({bucket(0, 4)}, {10, 10, 10, 10}, 15)), (Shape{{0, 2}, {2, 2}}));
  // Buckets cut at 20 bytes of gradients from layers of 10 trained bytes each: the units are the buckets.
  EXPECT_EQ(shape(weight_units({bucket(0, 2), bucket(2, 2)}, {10, 10, 10, 10}, 20)), (Shape{{0, 2}, {2, 2}}));
  // A frozen tail after the last bucket is cut the same way, its last unit what is left.
  const std::vector<Bucket> tail = weight_units({bucket(0, 1)}, {10, 10, 10, 10}, 15);
  EXPECT_EQ(shape(tail), (Shape{{0, 1}, {1, 2}, {3, 1}}));
  EXPECT_EQ(tail[1].size, 20u);
  // Time: LoRA-like, two layers of 20 MB of weights but few trained values, one bucket. Cut into two units,
  // the second layer's gather runs under the first layer's backward; gathered whole, nothing overlaps it.
  TimingSpec lora = zero3(true);
  lora.segments = {{1000, 1000, 1e9}, {0, 1000, 1e9}};
  const auto cut = simulate(4, lora);
  lora.bucket_bytes = 1e12;  // one bucket either way; now one unit too
  const auto whole = simulate(4, lora);
  ASSERT_EQ(cut[5], 1);
  ASSERT_EQ(whole[5], 1);
  EXPECT_DOUBLE_EQ(cut[6], whole[6]) << "the same bytes";
  EXPECT_LT(cut[2] - cut[1], whole[2] - whole[1]);
}

// One worker: the units' forward, the backward and a frozen tail (its own unit) are the compute alone.
TEST(SyncTiming, ZeroStage3OnOneWorkerIsItsComputeAlone) {
  TimingSpec s = zero3(true);
  s.segments.push_back({0, 0, 3e9});
  s.segment_forward_flops.push_back(0.5e9);
  s.segment_gather_bytes.push_back(8e6);
  const auto r = simulate(1, s);
  EXPECT_NEAR(r[0], 2.5e-3 + 5e-3 + 0.125e-3, 1e-12);
  EXPECT_EQ(r[5], 2);  // buckets: the tail is a unit to gather but no bucket
}

// With analytic collectives on identical hosts rank 0 stands in for every rank: the same step ends, compute,
// exposed time and bytes as all 12 ranks simulated, with and without overlap and ZeRO; never at stepwise.
TEST(SyncTiming, OneRankStandsInForIdenticalRanksOnlyWithAnalyticCollectives) {
  const int n = 12;
  for (const bool overlap : {true, false}) {
    for (const int zero : {0, 2, 3}) {
      TimingSpec s = zero == 3 ? zero3(overlap) : two_buckets(overlap);
      s.zero_stage = zero;
      s.gathered_bytes = zero == 2 ? 40e6 : 0;
      const auto alone = simulate(n, s, Fidelity::Analytic);
      s.one_rank_may_stand_in = false;
      const auto all = simulate(n, s, Fidelity::Analytic);
      ASSERT_EQ(alone.size(), all.size());
      EXPECT_EQ(alone.back(), 1) << overlap << zero;
      EXPECT_EQ(all.back(), 0) << overlap << zero;
      for (size_t i = 0; i + 1 < all.size(); ++i) EXPECT_DOUBLE_EQ(alone[i], all[i]) << overlap << zero << " at " << i;
      // And the analytic step is the closed form's: without overlap, two ring allreduces exposed.
      if (!overlap && zero == 0) {
        EXPECT_NEAR(alone[4], 2 * ring_seconds(n, 20e6), 1e-9);
      }
    }
  }
  EXPECT_EQ(simulate(n, two_buckets(true)).back(), 0);  // stepwise: every rank runs
}

}  // namespace
}  // namespace dtsim::sim
