// Synchronous training surviving a failed worker: elastic continuation and checkpoint restart, with the
// failure, detection and resumption at the times the configuration implies.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/config/heterogeneity_config.hpp"
#include "sim/config/heterogeneity_parse.hpp"
#include "tests/sim/training_support.hpp"

namespace dtsim::sim {
namespace {

struct FaultRun {
  testing::RunReport report;
  nlohmann::json details;
};

FaultRun run_with(const std::string& events, const std::function<void(RunConfig&)>& adjust) {
  FaultRun out;
  const std::string text = testing::run_in_child([&] {
    RunInputs in = testing::small_training_run(4, 16, 60, [&](RunConfig& c) {
      if (!events.empty()) c.heterogeneity.faults.events = parse_fault_events(events, c.workers);
      c.sync.fault_timeout_s = 0.002;
      if (adjust) adjust(c);
    });
    MetricsLog metrics;
    const RunResult r = run_training(in, metrics);
    nlohmann::json j = r.strategy_details;
    j["simulated_time"] = r.simulated_time_s;
    j["steps"] = r.steps;
    j["params"] = r.final_params;
    for (const WorkerTime& t : r.worker_time)
      j["worker_time"].push_back({{"compute", t.compute}, {"communication", t.communication}, {"idle", t.idle}});
    return j.dump();
  });
  out.details = nlohmann::json::parse(text);
  out.report.params = out.details["params"].get<std::vector<float>>();
  out.report.simulated_time = out.details["simulated_time"];
  out.report.steps = out.details["steps"];
  return out;
}

TEST(SyncFaults, ElasticContinuesWithTheSurvivorsAfterTheTimeout) {
  const FaultRun r = run_with("worker 2 down at 3ms", nullptr);
  EXPECT_EQ(r.report.steps, 60);
  ASSERT_EQ(r.details["faults"].size(), 1u);
  const auto& f = r.details["faults"][0];
  EXPECT_EQ(f["reaction"], "elastic");
  EXPECT_DOUBLE_EQ(f["failed_at_s"].get<double>(), 0.003);
  EXPECT_DOUBLE_EQ(f["detected_at_s"].get<double>(), 0.005);
  EXPECT_DOUBLE_EQ(f["resumed_at_s"].get<double>(), 0.005);
  EXPECT_EQ(f["workers_after"], 3);
  EXPECT_EQ(r.details["workers_at_end"], 3);
  EXPECT_EQ(f["steps_rolled_back"], 0);
  // Elastic continuation keeps the model as the failure found it, so the accuracy before the failure is the
  // accuracy on resuming (it used to be the last evaluation row's, here the untrained model's).
  EXPECT_EQ(f["accuracy_before"].get<double>(), f["accuracy_on_resuming"].get<double>());
  EXPECT_GT(f["accuracy_before"].get<double>(), 0.2) << "a model trained for a few steps, not the initial one";
}

// The time between a failure and the resumption is nobody's compute or communication: it is idle, so that
// every worker's breakdown adds up to the run's simulated time (before 2026-12-06 a 60 s timeout showed as
// 0 % idle, the breakdown summing to a few milliseconds).
TEST(SyncFaults, TheWaitForAFailureIsIdleAndTheBreakdownAddsUp) {
  const FaultRun r = run_with("worker 2 down at 3ms", [](RunConfig& c) { c.sync.fault_timeout_s = 0.05; });
  ASSERT_EQ(r.details["worker_time"].size(), 4u);
  for (size_t w = 0; w < 4; ++w) {
    const auto& t = r.details["worker_time"][w];
    const double compute = t["compute"], communication = t["communication"], idle = t["idle"];
    EXPECT_NEAR(compute + communication + idle, r.report.simulated_time, 1e-12) << "worker " << w;
    EXPECT_GE(idle, 0.05) << "worker " << w << " waited out the 50 ms timeout, or was down";
  }
  // The failed worker computed only until 3 ms.
  EXPECT_LT(r.details["worker_time"][2]["compute"].get<double>() +
                r.details["worker_time"][2]["communication"].get<double>(),
            0.003 + 1e-12);
}

TEST(SyncFaults, RestartRollsBackToTheCheckpointAndReproducesTheFaultFreeNumerics) {
  const auto restart = [](RunConfig& c) {
    c.sync.fault_reaction = FaultReaction::Restart;
    c.sync.checkpoint_every = 10;
    c.sync.restart_s = 0.004;
    c.sync.checkpoint_bandwidth = 1e12;  // checkpoint I/O costs ~2 us here
  };
  const FaultRun clean = run_with("", restart);
  const FaultRun faulty = run_with("worker 1 down at 3ms up at 4ms", restart);
  // The redone steps read the same batches from the same checkpointed state: the same final model.
  EXPECT_EQ(faulty.report.params, clean.report.params);
  ASSERT_EQ(faulty.details["faults"].size(), 1u);
  const auto& f = faulty.details["faults"][0];
  EXPECT_EQ(f["reaction"], "restart");
  const int64_t step = f["step"];
  EXPECT_EQ(f["steps_rolled_back"].get<int64_t>(), step % 10);
  // Resumed once the node was back and the restart time had passed, plus reading the checkpoint back.
  const double detected = f["detected_at_s"];
  EXPECT_DOUBLE_EQ(detected, 0.005);
  EXPECT_GE(f["resumed_at_s"].get<double>(), std::max(0.004, detected + 0.004));
  EXPECT_LT(f["resumed_at_s"].get<double>(), detected + 0.004 + 1e-5);
  EXPECT_GT(f["caught_up_at_s"].get<double>(), f["resumed_at_s"].get<double>());
  EXPECT_NEAR(f["time_lost_s"].get<double>(), f["caught_up_at_s"].get<double>() - 0.003, 1e-12);
  EXPECT_GT(faulty.details["checkpoints_written"].get<int>(), 0);
  EXPECT_GT(faulty.report.simulated_time, clean.report.simulated_time);
}

TEST(SyncFaults, RestartWithoutTheNodeComingBackContinuesElastically) {
  const FaultRun r = run_with("worker 0 down at 3ms", [](RunConfig& c) { c.sync.fault_reaction = FaultReaction::Restart; });
  ASSERT_EQ(r.details["faults"].size(), 1u);
  EXPECT_EQ(r.details["faults"][0]["reaction"], "elastic");
  EXPECT_TRUE(r.details["faults"][0].contains("note"));
  EXPECT_EQ(r.report.steps, 60);
}

}  // namespace
}  // namespace dtsim::sim
