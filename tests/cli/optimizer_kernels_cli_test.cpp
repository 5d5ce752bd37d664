// compute.optimizer_kernels from the command line: a run with numerics and dtsim workload charge PyTorch's
// multi-tensor (foreach) optimizer with its extra passes over memory and kernels, summary.json and the
// workload report say which was charged, and the key is reported where nothing runs an optimizer step.
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
using OptimizerKernels = dtsim::testing::ScratchFolder;

const std::string kScenarios = std::string(DTSIM_SOURCE_DIR) + "/scenarios/";


TEST_F(OptimizerKernels, AForeachStepAddsItsPassesAndKernelsToEveryStepOfARun) {
  // The quickstart: an fp32 MLP 784-256-128-10 (235,146 weights in 3 dense layers), SGD with momentum, on
  // A100s at 1,555 GB/s and 5 us per launch. Fused, the update reads the gradient and the weight and reads
  // and writes the momentum, and writes the weight: 20 bytes a weight, 1 kernel a layer. Foreach: b *= mu (8),
  // b += g (12), w -= lr b (12): 32 bytes, 3 kernels. The update ends every step after the allreduce, so each
  // step grows by 12 × 235,146 / 1,555 GB/s + 3 × 2 × 5 us.
  const std::string job = "run " + kScenarios + "quickstart.ini --quiet --set training.epochs=1 --out ";
  const auto fused = run_dtsim(job + (dir_ / "fused").string(), true);
  ASSERT_EQ(fused.exit_code, 0) << fused.err;
  const auto foreach = run_dtsim(job + (dir_ / "foreach").string() + " --set compute.optimizer_kernels=foreach", true);
  ASSERT_EQ(foreach.exit_code, 0) << foreach.err;
  const nlohmann::json a = run_summary(dir_ / "fused"), b = run_summary(dir_ / "foreach");
  EXPECT_EQ(a["compute_model"]["optimizer_kernels"], "fused");
  EXPECT_EQ(b["compute_model"]["optimizer_kernels"], "foreach");
  const double steps = b["steps"].get<double>();
  ASSERT_EQ(steps, a["steps"].get<double>());
  const double per_step = 12.0 * 235146 / 1555e9 + 3 * 2 * 5e-6;
  const double grown = b["simulated_time_s"].get<double>() - a["simulated_time_s"].get<double>();
  EXPECT_NEAR(grown, steps * per_step, 1e-9 * steps * per_step);
  // The numerics do not depend on how the update is charged.
  EXPECT_EQ(a["final_test_accuracy"], b["final_test_accuracy"]);
}

TEST_F(OptimizerKernels, DtsimWorkloadChargesTheForeachAdamPasses) {
  // LLaMA-7B on one A100 80GB in bf16 with fp32 master weights: foreach Adam moves 82 bytes a weight where
  // fused moves 30, and launches 9 kernels a trained layer where fused launches 1.
  const auto fused = run_dtsim("workload llama-7b --format json", true);
  ASSERT_EQ(fused.exit_code, 0) << fused.err;
  const auto foreach = run_dtsim("workload llama-7b --optimizer-kernels foreach --format json", true);
  ASSERT_EQ(foreach.exit_code, 0) << foreach.err;
  const nlohmann::json a = nlohmann::json::parse(fused.output), b = nlohmann::json::parse(foreach.output);
  EXPECT_EQ(a["setup"]["optimizer_kernels"], "fused");
  EXPECT_EQ(b["setup"]["optimizer_kernels"], "foreach");
  const double kernels = b["compute_per_micro_batch_s"]["kernels"].get<double>() -
                         a["compute_per_micro_batch_s"]["kernels"].get<double>();
  const double layers = kernels / 8;  // 8 more kernels per trained layer
  EXPECT_GT(layers, 0);
  EXPECT_DOUBLE_EQ(layers, static_cast<double>(static_cast<long long>(layers)));
  const double trained = a["trainable"].get<double>();
  const double expected = trained * 82 / 2039e9 + 9 * layers * 5e-6;
  EXPECT_NEAR(b["compute_per_micro_batch_s"]["optimizer"].get<double>(), expected, 1e-9 * expected);
  EXPECT_NEAR(a["compute_per_micro_batch_s"]["optimizer"].get<double>(), trained * 30 / 2039e9 + layers * 5e-6,
              1e-9 * expected);
  const auto bad = run_dtsim("workload llama-7b --optimizer-kernels fusd", true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("did you mean 'fused'"), std::string::npos) << bad.err;
}

TEST_F(OptimizerKernels, AParameterServerRunReportsTheKeyAsWithoutEffect) {
  const auto ps = run_dtsim("check " + kScenarios + "quickstart.ini --set training.strategy=async-ps "
                            "--set compute.optimizer_kernels=foreach", true);
  EXPECT_EQ(ps.exit_code, 0) << ps.err;
  EXPECT_NE(ps.err.find("compute.optimizer_kernels: has no effect with training.strategy = async-ps"), std::string::npos)
      << ps.err;
  // A framework profile's buckets, overlap, sharding and optimizer kernels are all outside such a run.
  const auto framework = run_dtsim("check " + kScenarios + "quickstart.ini --set training.strategy=async-ps "
                                   "--set framework.profile=pytorch-ddp", true);
  EXPECT_EQ(framework.exit_code, 0) << framework.err;
  EXPECT_NE(framework.err.find("framework.profile: has no effect with training.strategy = async-ps"), std::string::npos)
      << framework.err;
  // In a synchronous run it applies, and is not reported.
  const auto sync = run_dtsim("check " + kScenarios + "quickstart.ini --set framework.profile=pytorch-ddp", true);
  EXPECT_EQ(sync.err.find("framework.profile"), std::string::npos) << sync.err;
}

}  // namespace
