// dtsim validate through the executable: the claim list, a small real check end to end (its line, its
// validate.json and the runs' folders), a failing claim's exit status (a scenario folder where the claim
// cannot show), and bad flags.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/background_dtsim.hpp"
#include "tests/cli/run_dtsim.hpp"

namespace {

namespace fs = std::filesystem;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class Validate : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = fs::temp_directory_path() / ("dtsim_validate_" + std::to_string(::getpid()));
    fs::remove_all(out_);
  }
  void TearDown() override { fs::remove_all(out_); }

  // A scenario folder holding the top-k scenario cut to one training step (runs that take a second and learn
  // nothing); returns the scenario file's path.
  fs::path one_step_topk_scenario() {
    fs::create_directories(out_ / "scenarios");
    std::ifstream original(std::string(DTSIM_SOURCE_DIR) + "/scenarios/topk_error_feedback.ini");
    std::string text((std::istreambuf_iterator<char>(original)), std::istreambuf_iterator<char>());
    const size_t at = text.find("[training]\n");
    EXPECT_NE(at, std::string::npos);
    text.insert(at + std::string("[training]\n").size(), "max_steps = 1\n");
    const fs::path scenario = out_ / "scenarios" / "topk_error_feedback.ini";
    std::ofstream(scenario) << text;
    return scenario;
  }
  fs::path out_;
};

TEST_F(Validate, ListsEveryClaimWithItsRuns) {
  const auto o = dtsim::testing::run_dtsim("validate --list --quick");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  for (const char* claim : {"sync-matches-single", "async-slow-nodes-lose-accuracy", "faster-network-less-staleness",
                            "large-batch-scaling", "topk-error-feedback", "noniid-fedavg-loss",
                            "local-sgd-communication", "mixed-precision"})
    EXPECT_TRUE(has(o.output, std::string(claim) + ": ")) << claim;
  EXPECT_TRUE(has(o.output, "--set data.train_samples=12000")) << "quick runs use the quick data";
  EXPECT_FALSE(has(dtsim::testing::run_dtsim("validate --list").output, "data.train_samples=12000"));
  // Claims whose full-scale effect sits near its threshold run 5 seeds unless --seeds says otherwise.
  const auto full = dtsim::testing::run_dtsim("validate --list").output;
  EXPECT_TRUE(has(full, "against IID clients (5 seeds)")) << full;
  EXPECT_TRUE(has(full, "within 1 point of synchronous SGD (5 seeds)")) << full;
  EXPECT_TRUE(has(full, "within 1 point of FP32 (3 seeds)")) << full;
  EXPECT_TRUE(has(o.output, "against IID clients (3 seeds)")) << "--quick runs 3";
  EXPECT_TRUE(has(dtsim::testing::run_dtsim("validate --list --seeds 2").output, "against IID clients (2 seeds)"));
  const auto one = dtsim::testing::run_dtsim("validate --list --only topk-error-feedback");
  EXPECT_TRUE(has(one.output, "topk-error-feedback: ")) << one.output;
  EXPECT_FALSE(has(one.output, "mixed-precision: ")) << one.output;
}

TEST_F(Validate, OneClaimEndToEnd) {
  const auto o = dtsim::testing::run_dtsim("validate --quick --only sync-matches-single --seeds 2 --jobs 2 --out " +
                                           out_.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(has(o.output, "PASS  sync-matches-single")) << o.output;
  EXPECT_TRUE(has(o.output, "4 runs (0 more shared between claims), 2 seeds each")) << o.output;
  std::ifstream in(out_ / "validate.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc["claims"].size(), 1u);
  const nlohmann::json& claim = doc["claims"][0];
  EXPECT_TRUE(claim["pass"].get<bool>());
  // Each configuration's accuracies, one per seed, as the runs' own summaries give them.
  for (const char* config : {"single", "sync-8"})
    for (int seed = 1; seed <= 2; ++seed) {
      std::ifstream s(out_ / "sync-matches-single" / (std::string(config) + "-s" + std::to_string(seed)) / "summary.json");
      const nlohmann::json summary = nlohmann::json::parse(s);
      EXPECT_EQ(summary["status"], "completed");
      EXPECT_EQ(summary["seed"], seed);
      EXPECT_DOUBLE_EQ(claim["configurations"][config]["accuracy"][seed - 1].get<double>(),
                       100.0 * summary["final_test_accuracy"].get<double>());
    }
}

TEST_F(Validate, AClaimThatDoesNotHoldFailsWithExitStatusOne) {
  // With one step no configuration learns anything, so top-k without error feedback cannot lose the point
  // the claim asks for.
  one_step_topk_scenario();
  const auto o = dtsim::testing::run_dtsim("validate --quick --only topk-error-feedback --seeds 2 --jobs 2 --out " +
                                           (out_ / "runs").string() + " --scenarios " + (out_ / "scenarios").string());
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_TRUE(has(o.output, "FAIL  topk-error-feedback")) << o.output;
}

// --resume keeps a run only when it finished with the same executable, scenario file and flags: an
// interrupted run (no summary.json) and a run recorded with other flags are run again, and so is every run
// once the scenario file changes. Runs of one step (a copied scenario folder) keep this test fast.
TEST_F(Validate, ResumeKeepsOnlyFinishedRunsOfTheSameConfiguration) {
  const fs::path scenario = one_step_topk_scenario();
  const std::string command = "validate --quick --only topk-error-feedback --seeds 1 --jobs 2 --out " +
                              (out_ / "runs").string() + " --scenarios " + (out_ / "scenarios").string();
  const auto first = dtsim::testing::run_dtsim(command + " --resume");
  ASSERT_EQ(first.exit_code, 1) << first.output;  // one step learns nothing: the claim fails, the runs finish
  EXPECT_TRUE(has(first.output, "--resume: 0 of them finished earlier with the same executable, scenario file and "
                                "flags; 3 to run")) << first.output;
  const fs::path runs = out_ / "runs" / "topk-error-feedback";
  for (const char* run : {"dense-s1", "topk-no-ef-s1", "topk-ef-s1"}) {
    ASSERT_TRUE(fs::exists(runs / run / "summary.json")) << run;
    ASSERT_TRUE(fs::exists(runs / run / "validate-run.json")) << run;
  }
  // dense: interrupted; topk-no-ef: recorded with other flags; topk-ef: untouched, and marked so that a rerun
  // (which would rewrite its summary) shows.
  fs::remove(runs / "dense-s1" / "summary.json");
  {
    std::ifstream r(runs / "topk-no-ef-s1" / "validate-run.json");
    nlohmann::json record = nlohmann::json::parse(r);
    record["arguments"].push_back("--set");
    record["arguments"].push_back("training.lr=0.5");
    std::ofstream(runs / "topk-no-ef-s1" / "validate-run.json") << record.dump();
  }
  const fs::path kept = runs / "topk-ef-s1" / "summary.json";
  nlohmann::json marked;
  {
    std::ifstream in(kept);
    marked = nlohmann::json::parse(in);
  }
  marked["marker"] = "kept";
  std::ofstream(kept) << marked.dump();

  const auto second = dtsim::testing::run_dtsim(command + " --resume");
  ASSERT_EQ(second.exit_code, 1) << second.output;
  EXPECT_TRUE(has(second.output, "--resume: 1 of them finished earlier with the same executable, scenario file and "
                                 "flags; 2 to run")) << second.output;
  EXPECT_TRUE(fs::exists(runs / "dense-s1" / "summary.json"));
  {
    std::ifstream in(kept);
    EXPECT_EQ(nlohmann::json::parse(in).value("marker", ""), "kept");
  }
  {
    std::ifstream in(out_ / "runs" / "validate.json");
    const nlohmann::json doc = nlohmann::json::parse(in);
    EXPECT_EQ(doc["claims"][0]["configurations"]["topk-ef"]["accuracy"].size(), 1u) << "the kept run is counted";
  }

  std::ofstream(scenario, std::ios::app) << "# edited\n";
  const auto edited = dtsim::testing::run_dtsim(command + " --resume");
  EXPECT_TRUE(has(edited.output, "--resume: 0 of them finished earlier")) << edited.output;
  {
    std::ifstream in(kept);
    EXPECT_EQ(nlohmann::json::parse(in).value("marker", ""), "") << "a changed scenario file reruns every run";
  }
  // Without --resume every run is made again.
  const auto fresh = dtsim::testing::run_dtsim(command);
  EXPECT_FALSE(has(fresh.output, "--resume")) << fresh.output;
  EXPECT_EQ(dtsim::testing::run_dtsim("validate --list --resume").exit_code, 2);
  // Nor does --list take the flags that only shape runs.
  for (const std::string flag : {"--out /dev/null/x", "--jobs 2", "--scenarios /tmp"}) {
    const auto refused = dtsim::testing::run_dtsim("validate --list " + flag);
    EXPECT_EQ(refused.exit_code, 2) << flag;
    EXPECT_TRUE(has(refused.output, "has no effect with --list, which runs nothing")) << refused.output;
  }
}

// --resume reads back each run folder's validate-run.json and summary.json: a FIFO in their place blocked it for
// ever, and a summary whose accuracy was a string ended validate with an internal error. Both are runs without a
// result now, made again (issue 57). Under a timeout, so that a hang fails the test.
TEST_F(Validate, ResumeRunsAgainWhatItCannotReadBack) {
  one_step_topk_scenario();
  const std::string command = "validate --quick --only topk-error-feedback --seeds 1 --jobs 2 --out " +
                              (out_ / "runs").string() + " --scenarios " + (out_ / "scenarios").string() + " --resume";
  ASSERT_EQ(dtsim::testing::run_dtsim(command, false, 600).exit_code, 1);
  const fs::path runs = out_ / "runs" / "topk-error-feedback";
  fs::remove(runs / "dense-s1" / "validate-run.json");
  ASSERT_EQ(::mkfifo((runs / "dense-s1" / "validate-run.json").c_str(), 0644), 0);
  nlohmann::json damaged;
  {
    std::ifstream in(runs / "topk-no-ef-s1" / "summary.json");
    damaged = nlohmann::json::parse(in);
  }
  damaged["final_test_accuracy"] = "high";
  std::ofstream(runs / "topk-no-ef-s1" / "summary.json") << damaged.dump();
  const auto again = dtsim::testing::run_dtsim(command, false, 600);
  EXPECT_NE(again.exit_code, 124) << "hung on the FIFO";
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_FALSE(has(again.output, "internal error")) << again.output;
  EXPECT_TRUE(has(again.output, "--resume: 1 of them finished earlier with the same executable, scenario file and "
                                "flags; 2 to run")) << again.output;
  std::ifstream in(runs / "topk-no-ef-s1" / "summary.json");
  EXPECT_TRUE(nlohmann::json::parse(in)["final_test_accuracy"].is_number()) << "made again";
}

// An interrupted validate used to leave the earlier validate's validate.json (PASS or FAIL of other runs)
// beside run folders it had begun to redo, and those folders with the earlier runs' files but no summary.
TEST_F(Validate, ARerunClearsTheEarlierVerdictAndRunFilesBeforeRunning) {
  const fs::path scenario = one_step_topk_scenario();
  const std::string command = "validate --quick --only topk-error-feedback --seeds 1 --jobs 1 --out " +
                              (out_ / "runs").string() + " --scenarios " + (out_ / "scenarios").string();
  ASSERT_EQ(dtsim::testing::run_dtsim(command).exit_code, 1);
  ASSERT_TRUE(fs::exists(out_ / "runs" / "validate.json"));
  const fs::path dense = out_ / "runs" / "topk-error-feedback" / "dense-s1";
  std::ofstream(dense / "report.html") << "an earlier run's page";
  std::ofstream(dense / "trace.json") << "{}";
  // A scenario whose runs take long enough to be stopped while they run.
  std::ofstream(scenario) << "[training]\nstrategy = sync\nepochs = 1000\n[data]\ntrain_samples = 2000\n";
  dtsim::testing::BackgroundRun again({"validate", "--quick", "--only", "topk-error-feedback", "--seeds", "1", "--jobs",
                                       "1", "--out", (out_ / "runs").string(), "--scenarios", (out_ / "scenarios").string()},
                                      out_ / "stderr.txt");
  ASSERT_TRUE(dtsim::testing::wait_until([&] { return !fs::exists(dense / "trace.json"); }, 60));
  EXPECT_FALSE(fs::exists(out_ / "runs" / "validate.json")) << "gone before any run starts";
  EXPECT_FALSE(fs::exists(dense / "report.html"));
  EXPECT_EQ(again.stop(SIGINT), 128 + SIGINT);
  EXPECT_FALSE(fs::exists(out_ / "runs" / "validate.json"));
}

// Claims that name the same configuration share its runs: the quickstart at the quick scale is local SGD's
// "sync" and mixed precision's "fp32"; both claims read the one run's accuracy.
TEST_F(Validate, SharedConfigurationsRunOnce) {
  const auto o = dtsim::testing::run_dtsim(
      "validate --quick --only local-sgd-communication,mixed-precision --seeds 1 --jobs 2 --out " + out_.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(has(o.output, "4 runs (1 more shared between claims)")) << o.output;
  EXPECT_FALSE(fs::exists(out_ / "mixed-precision" / "fp32-s1"));
  std::ifstream in(out_ / "validate.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["claims"][0]["configurations"]["sync"]["accuracy"], doc["claims"][1]["configurations"]["fp32"]["accuracy"]);
}

// A claim dtsim is documented not to reproduce prints FAIL with its reason and leaves the exit status alone.
TEST_F(Validate, AKnownDisagreementIsPrintedButDoesNotFailTheCommand) {
  const auto o = dtsim::testing::run_dtsim("validate --quick --only faster-network-less-staleness --seeds 1 --out " +
                                           out_.string());
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(has(o.output, "FAIL  faster-network-less-staleness")) << o.output;
  EXPECT_TRUE(has(o.output, "[known disagreement: staleness counted in updates averages N - 1")) << o.output;
}

TEST_F(Validate, BadFlagsAreRefusedWithExitStatusTwo) {
  const auto unknown = dtsim::testing::run_dtsim("validate --only nope");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(has(unknown.output, "--only: no claim named 'nope'; the claims are sync-matches-single")) << unknown.output;
  EXPECT_EQ(dtsim::testing::run_dtsim("validate --seeds 0").exit_code, 2);
  // An empty list selected every claim: the whole validate ran (40 minutes).
  const auto empty = dtsim::testing::run_dtsim("validate --only '' --out " + (out_ / "empty").string());
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_TRUE(has(empty.output, "--only: names no claim; name at least one (see --list)")) << empty.output;
  EXPECT_FALSE(fs::exists(out_ / "empty"));
  EXPECT_EQ(dtsim::testing::run_dtsim("validate stray").exit_code, 2);
  // An --out that cannot be made (a file stands where its folder would go) is bad input, not a crash.
  fs::create_directories(out_);
  std::ofstream(out_ / "taken") << "a file";
  const auto out = dtsim::testing::run_dtsim("validate --quick --only mixed-precision --seeds 1 --out " +
                                             (out_ / "taken").string());
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_TRUE(has(out.output, "--out: cannot create")) << out.output;
  const auto folder = dtsim::testing::run_dtsim("validate --scenarios /no/such/folder");
  EXPECT_EQ(folder.exit_code, 2);
  EXPECT_TRUE(has(folder.output, "--scenarios: no folder '/no/such/folder'")) << folder.output;
}

}  // namespace
