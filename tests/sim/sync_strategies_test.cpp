// Synchronous data parallel with buckets and accumulation, and local SGD, through the whole simulator.
#include <gtest/gtest.h>

#include "sim/collectives/collective.hpp"
#include "tests/sim/training_support.hpp"

namespace dtsim::sim {
namespace {

using dtsim::testing::relative_difference;
using dtsim::testing::run_and_report;
using dtsim::testing::RunReport;
using dtsim::testing::small_training_run;

RunReport run(int workers, int batch, int64_t steps, const std::function<void(RunConfig&)>& adjust) {
  return run_and_report([=] { return small_training_run(workers, batch, steps, adjust); });
}

TEST(LocalSgd, OneLocalStepEqualsSyncDataParallelBitForBit) {
  const RunReport sync = run(4, 16, 40, [](RunConfig& c) { c.strategy = Strategy::Sync; });
  const RunReport local = run(4, 16, 40, [](RunConfig& c) {
    c.strategy = Strategy::Local;
    c.sync.local_steps = 1;
  });
  ASSERT_EQ(sync.params.size(), local.params.size());
  EXPECT_EQ(sync.params, local.params);
  EXPECT_EQ(sync.simulated_time, local.simulated_time);
}

TEST(LocalSgd, AveragesEveryHStepsAndSendsLessThanSync) {
  const RunReport sync = run(4, 16, 40, [](RunConfig& c) { c.strategy = Strategy::Sync; });
  const RunReport local = run(4, 16, 40, [](RunConfig& c) {
    c.strategy = Strategy::Local;
    c.sync.local_steps = 4;
  });
  // Parameters and gradients have the same size, so 4 local steps between averagings send a quarter.
  EXPECT_DOUBLE_EQ(local.bytes, sync.bytes / 4);
  EXPECT_LT(local.simulated_time, sync.simulated_time);
  EXPECT_GT(relative_difference(local.params, sync.params), 1e-4) << "local steps change the numerics";
  // Post-local SGD: synchronous first, so the first 20 steps match sync exactly and the bytes add up.
  const RunReport post = run(4, 16, 40, [](RunConfig& c) {
    c.strategy = Strategy::Local;
    c.sync.local_steps = 4;
    c.sync.sync_until_step = 20;
  });
  EXPECT_DOUBLE_EQ(post.bytes, sync.bytes / 2 + sync.bytes / 2 / 4);
}

TEST(SyncDataParallel, AccumulatingMicroBatchesEqualsOneLargerBatch) {
  const RunReport large = run(2, 32, 30, nullptr);
  const RunReport accumulated = run(2, 8, 30, [](RunConfig& c) { c.sync.accumulation_steps = 4; });
  EXPECT_LT(relative_difference(accumulated.params, large.params), 1e-5);
  EXPECT_EQ(accumulated.bytes, large.bytes);  // one allreduce per optimizer step either way
}

// Buckets: with backward split over several buckets the allreduces overlap the rest of backward.
TEST(SyncDataParallel, OverlappedBucketsAreBoundedByComputeAndCommunication) {
  const auto with = [](bool overlap) {
    return run(4, 16, 10, [overlap](RunConfig& c) {
      c.fabric.bandwidth = 2e9;         // slow enough for communication to matter
      c.gpu.efficiency = 0.0005;        // slow enough for compute to matter
      c.sync.bucket_bytes = 100e3;      // several buckets for the 0.94 MB gradient
      c.sync.overlap = overlap;
    });
  };
  const RunReport serial = with(false);
  const RunReport overlapped = with(true);
  // Without overlap a step is exactly compute + communication (identical workers: no waiting).
  EXPECT_NEAR(serial.simulated_time, serial.compute + serial.communication, 1e-9 * serial.simulated_time);
  EXPECT_EQ(serial.idle, 0.0);
  const double compute = serial.compute, communication = serial.communication;
  EXPECT_DOUBLE_EQ(overlapped.compute, compute);
  EXPECT_LE(overlapped.simulated_time, compute + communication);
  EXPECT_GE(overlapped.simulated_time, std::max(compute, communication) * (1 - 1e-12));
  EXPECT_LT(overlapped.simulated_time, serial.simulated_time);
  EXPECT_EQ(overlapped.params, serial.params) << "overlap changes time, not numerics";
}


// Fidelity auto in a run with numerics: the stepwise transfers of a step may cost 7 % of its numerics
// (numerics_stepwise_cap), else the allreduce is aggregated; where other traffic shares the links auto keeps
// stepwise up to its own budget.
struct FidelityRun {
  std::string fidelity;    // what the bucket allreduces ran at
  double simulated_time = 0;
  double numerics_flops = 0;  // every worker's gradient work in one step
};

FidelityRun run_fidelity(int workers, int batch, Fidelity fidelity, bool background) {
  const std::string out = dtsim::testing::run_in_child([=] {
    const RunInputs in = small_training_run(workers, batch, 4, [=](RunConfig& c) {
      c.collectives.fidelity = fidelity;
      // A flow that starts long after the run: traffic on the links in principle, none in fact.
      if (background) c.heterogeneity.background.flows = {{0, 1, 1e6, kNever, 0.0}};
    });
    MetricsLog metrics;
    const RunResult r = run_training(in, metrics);
    const double flops = workers * batch * (r.forward_flops_per_sample + r.backward_flops_per_sample);
    return r.strategy_details.at("collective_fidelity").get<std::string>() + "\n" +
           dtsim::testing::to_bytes(std::vector<double>{r.simulated_time_s, flops});
  });
  const size_t newline = out.find('\n');
  const std::vector<double> numbers = dtsim::testing::from_bytes<double>(out.substr(newline + 1));
  return {out.substr(0, newline), numbers.at(0), numbers.at(1)};
}

TEST(SyncDataParallel, AutoFidelityHoldsStepwiseTransfersToAShareOfTheNumerics) {
  // 16 workers of one sample: 480 ring transfers a step against ~6 MFLOP of gradients (a cap of 2).
  const FidelityRun cheap = run_fidelity(16, 1, Fidelity::Auto, false);
  EXPECT_LT(numerics_stepwise_cap(cheap.numerics_flops), 2u * 16 * 15);
  EXPECT_EQ(cheap.fidelity, "aggregated");
  EXPECT_EQ(cheap.simulated_time, run_fidelity(16, 1, Fidelity::Aggregated, false).simulated_time);
  const FidelityRun stepwise = run_fidelity(16, 1, Fidelity::Stepwise, false);
  EXPECT_EQ(stepwise.fidelity, "stepwise");
  EXPECT_NEAR(cheap.simulated_time, stepwise.simulated_time, 1e-4 * stepwise.simulated_time)
      << "without other traffic the two fidelities agree";

  // 4 workers of 64 samples: 24 transfers against ~120 MFLOP (a cap of ~47).
  const FidelityRun dear = run_fidelity(4, 64, Fidelity::Auto, false);
  EXPECT_GE(numerics_stepwise_cap(dear.numerics_flops), 2u * 4 * 3);
  EXPECT_EQ(dear.fidelity, "stepwise");
  EXPECT_EQ(dear.simulated_time, run_fidelity(4, 64, Fidelity::Stepwise, false).simulated_time);

  // Background traffic: the cap is off, and 480 transfers are well inside auto's own budget.
  EXPECT_EQ(run_fidelity(16, 1, Fidelity::Auto, true).fidelity, "stepwise");
}

}  // namespace
}  // namespace dtsim::sim
