// ZeRO stages 1 to 3 in a run with numerics (sync.zero_stage): the same training bit for bit as plain data
// parallelism (ZeRO moves state, not math); stages 1-2 put the same bytes on the wire as a ring allreduce
// (reduce-scatter of the gradients plus all-gather of the weights, each (N - 1) / N of the model per rank),
// stage 3 half as much again (the weights gathered before forward and before backward); and a shorter
// optimizer step (each worker updates its 1/N shard).
#include <gtest/gtest.h>

#include "tests/sim/training_support.hpp"

namespace dtsim::testing {
namespace {

RunReport zero_run(int stage, int workers = 4) {
  return run_and_report([&] {
    return small_training_run(workers, 32, 6, [&](sim::RunConfig& c) {
      c.sync.zero_stage = stage;
      c.sync.bucket_bytes = 100e3;  // two buckets
      c.gpu.memory_bandwidth = 1.5e12;
      c.gpu.launch_overhead = 5e-6;
    });
  });
}

TEST(Zero, TrainsBitForBitLikePlainDataParallelism) {
  const RunReport plain = zero_run(0);
  for (const int stage : {1, 2, 3}) {
    const RunReport zero = zero_run(stage);
    ASSERT_EQ(zero.params.size(), plain.params.size());
    EXPECT_EQ(zero.params, plain.params) << "stage " << stage;
    EXPECT_EQ(zero.steps, plain.steps);
  }
}

TEST(Zero, SendsWhatARingAllreduceSendsAndUpdatesOnlyItsShard) {
  const int n = 4;
  const RunReport plain = zero_run(0, n), zero = zero_run(2, n);
  // fp32 gradients and weights, 235,146 values, 6 steps: the ring allreduce sends 2 (N - 1) x 4 bytes per value
  // and step over all ranks; ZeRO's reduce-scatter and all-gather (N - 1) x 4 each.
  const double per_step = 2.0 * (n - 1) * 4 * 235146;
  EXPECT_DOUBLE_EQ(plain.bytes, 6 * per_step);
  EXPECT_DOUBLE_EQ(zero.bytes, 6 * per_step);
  // The update reads and writes 20 bytes per weight (SGD with momentum, fp32) at 1.5 TB/s: ZeRO saves 3/4 of
  // it on every worker, launches aside (the same 3 kernels).
  const double update = 20.0 * 235146 / 1.5e12;
  EXPECT_NEAR(plain.compute - zero.compute, 6 * update * (n - 1) / n, 1e-9);
}

TEST(Zero, Stage3GathersTheWeightsTwiceAStepAndHidesPartOfIt) {
  const int n = 4;
  const RunReport two = zero_run(2, n), three = zero_run(3, n);
  // Per step: the reduce-scatter of the fp32 gradients, then each unit's fp32 weights gathered twice
  // (N - 1) x 4 bytes per value each: 3 (N - 1) x 4 x 235,146 over all ranks.
  EXPECT_DOUBLE_EQ(three.bytes, 6 * 3.0 * (n - 1) * 4 * 235146);
  // The same compute (both update their shard); stage 3's gathers are communication, partly hidden behind
  // the forward and backward passes, where stage 2's one gather after the step is all exposed.
  EXPECT_NEAR(three.compute, two.compute, 1e-12);
  EXPECT_GT(three.communication, 0);
}

}  // namespace
}  // namespace dtsim::testing
