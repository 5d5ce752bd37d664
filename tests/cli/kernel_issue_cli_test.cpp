// compute.host_dispatch and compute.cuda_graphs on a run of the quickstart, whose MLP is launch-bound: a CUDA
// graph takes every launch out of a step, and a slow host makes every pass wait for its dispatch. summary.json
// says how kernels were issued, and the numerics do not move.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_dtsim.hpp"
#include "tests/cli/scratch_folder.hpp"

namespace {

namespace fs = std::filesystem;
using dtsim::testing::run_dtsim;
using dtsim::testing::run_summary;
using KernelIssue = dtsim::testing::ScratchFolder;

const std::string kScenarios = std::string(DTSIM_SOURCE_DIR) + "/scenarios/";


TEST_F(KernelIssue, GraphsRemoveTheLaunchesAndASlowHostSetsThePace) {
  // The quickstart's step on an A100 40GB (README): 3.5 us of layer rooflines, 3.0 us of optimizer traffic and
  // 23 kernels x 5 us of launches, 121.5 us, then the allreduce of its one bucket after the backward pass.
  //   graphs:             the launches go: 115 us less a step, exactly.
  //   100 us of dispatch: every pass waits for its host, 23 x (5 + 100) us = 2,415 us: 2,293.5 us more a step
  //                       (to the README's rounding of the rooflines).
  const std::string job = "run " + kScenarios + "quickstart.ini --quiet --set training.epochs=1 --out ";
  const auto eager = run_dtsim(job + (dir_ / "eager").string(), true);
  ASSERT_EQ(eager.exit_code, 0) << eager.err;
  const auto graphed = run_dtsim(job + (dir_ / "graphed").string() + " --set compute.cuda_graphs=true", true);
  ASSERT_EQ(graphed.exit_code, 0) << graphed.err;
  const auto slow = run_dtsim(job + (dir_ / "slow").string() + " --set compute.host_dispatch=100us", true);
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  const nlohmann::json a = run_summary(dir_ / "eager"), g = run_summary(dir_ / "graphed"), s = run_summary(dir_ / "slow");
  EXPECT_EQ(a["compute_model"]["host_dispatch_s"], 0.0);
  EXPECT_EQ(a["compute_model"]["cuda_graphs"], false);
  EXPECT_EQ(g["compute_model"]["cuda_graphs"], true);
  EXPECT_DOUBLE_EQ(s["compute_model"]["host_dispatch_s"].get<double>(), 100e-6);
  const double steps = a["steps"].get<double>();
  ASSERT_EQ(steps, g["steps"].get<double>());
  ASSERT_EQ(steps, s["steps"].get<double>());
  const double eager_s = a["simulated_time_s"].get<double>();
  EXPECT_NEAR(eager_s - g["simulated_time_s"].get<double>(), steps * 115e-6, 1e-9 * eager_s);
  EXPECT_NEAR(s["simulated_time_s"].get<double>() - eager_s, steps * 2293.5e-6, steps * 0.1e-6);
  EXPECT_EQ(a["final_test_accuracy"], g["final_test_accuracy"]);
  EXPECT_EQ(a["final_test_accuracy"], s["final_test_accuracy"]);
}

TEST_F(KernelIssue, AWorkloadSimulationWaitsForTheHostOnlyWhereItsKernelsAreShort) {
  // LLaMA-7B's kernels run for milliseconds: 3.3 us of dispatch hides behind them entirely, and the step does
  // not move. A graph takes out its launches: kernels x 5 us (A100 profile) less a step.
  const std::string job = "workload llama-7b --gpu a100-80gb --simulate --steps 3 --format json";
  const auto plain = run_dtsim(job, true), dispatched = run_dtsim(job + " --set compute.host_dispatch=3.3us", true),
             graphed = run_dtsim(job + " --set compute.cuda_graphs=true", true);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(dispatched.exit_code, 0) << dispatched.err;
  ASSERT_EQ(graphed.exit_code, 0) << graphed.err;
  const nlohmann::json p = nlohmann::json::parse(plain.output), d = nlohmann::json::parse(dispatched.output),
                       g = nlohmann::json::parse(graphed.output);
  const double step = p["simulation"]["step_s"].get<double>();
  EXPECT_DOUBLE_EQ(d["simulation"]["step_s"].get<double>(), step);
  const double launches = p["compute_per_micro_batch_s"]["launches"].get<double>();
  EXPECT_GT(launches, 0);
  EXPECT_NEAR(step - g["simulation"]["step_s"].get<double>(), launches, 1e-9 * step);
}

}  // namespace
