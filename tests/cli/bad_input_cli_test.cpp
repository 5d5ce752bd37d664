// Bad input of issue 57 that the corpus (tests/corpus/cases.txt) cannot hold: what needs links, large files,
// several commands in a row, or a look at what was written and printed besides the first line of stderr.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_dtsim.hpp"
#include "tests/cli/scratch_folder.hpp"

namespace dtsim::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kQuick = 60;  // seconds

using BadInput = ScratchFolder;

// DTSIM_WORKLOAD_DIR naming no folder was an internal error (exit 1) from dtsim run; it is bad input naming the
// variable, and the run writes nothing.
TEST_F(BadInput, AWorkloadFolderThatDoesNotExistIsBadInputNamingTheVariable) {
  ::setenv("DTSIM_WORKLOAD_DIR", (dir_ / "nonexistent").c_str(), 1);
  for (const std::string& args : {"run " + base_ + " --set workload.name=resnet50 --out " + (dir_ / "out").string(),
                                  "check " + base_ + " --set workload.name=resnet50", std::string("workload"),
                                  std::string("workload resnet50")}) {
    const DtsimOutcome o = run_dtsim(args, true, kQuick);
    EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.err;
    EXPECT_EQ(o.err.rfind("dtsim: error: environment: DTSIM_WORKLOAD_DIR: '" + (dir_ / "nonexistent").string() +
                              "' not found; point it at a folder of workload .json files, or unset it",
                          0),
              0u)
        << args << "\n" << o.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// An empty scenario ran the whole default job without a word; refused, and nothing is written.
TEST_F(BadInput, AnEmptyScenarioIsRefusedUnlessTheCommandLineSetsSomething) {
  const fs::path empty = dir_ / "empty.ini";
  std::ofstream(empty) << "# nothing yet\n\n";
  const DtsimOutcome run = run_dtsim("run " + empty.string() + " --out " + (dir_ / "out").string(), true, kQuick);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("the scenario file sets no key"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  const DtsimOutcome sweep = run_dtsim("sweep " + empty.string() + " --seeds 2 --out " + (dir_ / "sw").string(), true, kQuick);
  EXPECT_EQ(sweep.exit_code, 2) << sweep.err;
  EXPECT_FALSE(fs::exists(dir_ / "sw"));
  // With a --set, the command line says what to run.
  EXPECT_EQ(run_dtsim("check " + empty.string() + " --set run.name=defaults --quiet", true, kQuick).exit_code, 0);
}

// fl.deadline = 1ns drops every client of every round: the run still completes its rounds, and its status says
// that nothing was trained (only summary.json's strategy.dropped told before).
TEST_F(BadInput, ARunWhoseRoundsAllDroppedEveryClientSaysItTrainedNothing) {
  const fs::path out = dir_ / "out";
  const DtsimOutcome o =
      run_dtsim("run " + base_ + " --out " + out.string() +
                    " --set training.strategy=federated --set fl.rounds=3 --set fl.deadline=1ns --set training.epochs=1",
                true, 600);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json s = nlohmann::json::parse(file_text(out / "summary.json"));
  EXPECT_EQ(s["status"], "completed");
  EXPECT_EQ(s["strategy"]["rounds_without_update"], 3);
  EXPECT_EQ(s["status_reason"], "every planned round ran; 3 of 3 rounds aggregated no client's work (every selected "
                                "client was dropped: 6 at fl.deadline in all) and trained nothing; the model never trained");
  EXPECT_NE(o.output.find("status                completed: every planned round ran; 3 of 3 rounds"), std::string::npos)
      << o.output;
  // A deadline every client meets: no such note.
  ASSERT_EQ(run_dtsim("run " + base_ + " --quiet --out " + out.string() +
                          " --set training.strategy=federated --set fl.rounds=2 --set fl.deadline=1000s --set training.epochs=1",
                      true, 600).exit_code,
            0);
  const nlohmann::json fine = nlohmann::json::parse(file_text(out / "summary.json"));
  EXPECT_EQ(fine["status_reason"], "every planned round ran");
  EXPECT_EQ(fine["strategy"]["rounds_without_update"], 0);
}

// compare counted a run whose summary.json held a string accuracy and showed '-' without a word.
TEST_F(BadInput, CompareNamesASummaryWithAFieldThatIsNotANumber) {
  const fs::path a = dir_ / "a", b = dir_ / "b";
  ASSERT_EQ(run_dtsim("run " + base_ + " --quiet --out " + a.string() + " --set training.max_steps=4", true, 300).exit_code, 0);
  fs::create_directories(b);
  nlohmann::json s = nlohmann::json::parse(file_text(a / "summary.json"));
  s["final_test_accuracy"] = "high";
  std::ofstream(b / "summary.json") << s.dump(2);
  const DtsimOutcome o = run_dtsim("compare " + a.string() + " " + b.string(), true, kQuick);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "dtsim: warning: " + (b / "summary.json").string() +
                       ": final_test_accuracy is \"high\", not a number; the run counts as one without a result\n");
  std::istringstream lines(o.output);
  std::string line;
  while (std::getline(lines, line) && line.rfind(b.string(), 0) != 0) {
  }
  EXPECT_NE(line.find("0 of 1 (1 unreadable)"), std::string::npos) << o.output;
}

// A 50 MB title was printed whole; a workload file is held to the 16 MiB of every text input, its texts to one
// line of 1000 bytes.
TEST_F(BadInput, AWorkloadFileIsHeldToTheSizeOfATextInput) {
  nlohmann::json w = nlohmann::json::parse(file_text(fs::path(DTSIM_SOURCE_DIR) / "models/workloads/gpt2-xl.json"));
  w["name"] = "big";
  w["title"] = std::string(50u << 20, 'T');
  std::ofstream(dir_ / "big.json") << w.dump();
  const DtsimOutcome big = run_dtsim("workload " + (dir_ / "big.json").string(), true, kQuick);
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_EQ(big.output, "");
  EXPECT_EQ(big.err, "dtsim: error: " + (dir_ / "big.json").string() + ": is " +
                         std::to_string(fs::file_size(dir_ / "big.json")) +
                         " bytes, more than the 16 MiB such a file may hold; is it the right file?\n");
}

// ZeRO on one worker shards nothing, as `dtsim workload --zero 3 --gpus 1` already said; secure aggregation of
// one client per round hides nothing. Both are said, once each, and neither stops the run.
TEST_F(BadInput, ZeroOnOneWorkerAndSecureAggregationOfOneClientAreSaid) {
  const DtsimOutcome zero = run_dtsim("check " + base_ + " --quiet --set cluster.workers=1 --set sync.zero_stage=3", true, kQuick);
  EXPECT_EQ(zero.exit_code, 0) << zero.err;
  EXPECT_EQ(zero.err, "dtsim: warning: command line (--set): sync.zero_stage: has no effect on one GPU: ZeRO shards the "
                      "model state over the data-parallel GPUs, and one holds it all, as without ZeRO (cluster.workers = 1)\n");
  EXPECT_EQ(run_dtsim("check " + base_ + " --quiet --set sync.zero_stage=3", true, kQuick).err, "") << "two workers shard";
  const std::string fl = "check " + base_ + " --quiet --set training.strategy=federated --set fl.rounds=2 " +
                         "--set fl.secure_aggregation=true --set fl.clients_per_round=";
  const DtsimOutcome one = run_dtsim(fl + "1", true, kQuick);
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.err.find("dtsim: warning: command line (--set): fl.secure_aggregation: protects nothing with one client "
                         "per round (fl.clients_per_round = 1, cluster.workers = 2)"),
            std::string::npos)
      << one.err;
  EXPECT_EQ(run_dtsim(fl + "2", true, kQuick).err.find("fl.secure_aggregation"), std::string::npos);
}

// A loop of symbolic links was reported as "not found", wherever a file or folder is named.
TEST_F(BadInput, ALoopOfLinksIsNamedAsSuch) {
  const fs::path loop = dir_ / "loop";
  fs::create_symlink(dir_ / "loop2", loop);
  fs::create_symlink(loop, dir_ / "loop2");
  const std::string l = loop.string();
  for (const auto& [args, line] : std::vector<std::pair<std::string, std::string>>{
           {"check " + l, l + ": scenario file is a loop of symbolic links"},
           {"check " + base_ + " --set gpu.profile=" + l, "command line (--set): gpu.profile: profile file '" + l + "' is a loop"},
           {"workload " + l, l + ": is a loop of symbolic links"},
           {"check " + base_ + " --set workload.name=" + l, "command line (--set): workload.name: '" + l + "' is a loop"},
           {"compare " + l, l + ": cannot be read (Too many levels of symbolic links)"},
           {"collect " + l, l + ": cannot be read (Too many levels of symbolic links)"}}) {
    const DtsimOutcome o = run_dtsim(args, true, kQuick);
    EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.err;
    EXPECT_EQ(o.err.rfind("dtsim: error: " + line, 0), 0u) << args << "\n" << o.err;
  }
  // A sweep's script never replaces what stands at its path, a loop of links included (it did).
  const DtsimOutcome slurm = run_dtsim("sweep " + base_ + " --seeds 2 --out " + (dir_ / "sw").string() + " --slurm " + l,
                                       true, kQuick);
  EXPECT_EQ(slurm.exit_code, 2) << slurm.err;
  EXPECT_TRUE(fs::is_symlink(loop));
}

// A 1 MB key took 14.5 s (a suggestion searched by edit distance over every key) and printed a 1 MB line.
TEST_F(BadInput, AMegabyteKeyIsRefusedQuicklyInOneShortLine) {
  const fs::path file = dir_ / "big-key.ini";
  std::ofstream(file) << "[training]\n" << std::string(1 << 20, 'a') << " = 1\n";
  const auto start = std::chrono::steady_clock::now();
  const DtsimOutcome o = run_dtsim("check " + file.string(), true, kQuick);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_LT(o.err.size(), 1200u);
  EXPECT_EQ(o.err.rfind("dtsim: error: " + file.string() + ":2: training.aaaa", 0), 0u) << o.err.substr(0, 200);
  EXPECT_NE(o.err.find("[... 1048" ), std::string::npos) << "says how much it left out";
  EXPECT_NE(o.err.find("aaaa: unknown key; run 'dtsim keys' to list the valid keys\n"), std::string::npos);
}

// `dtsim keys --help` printed the general help; every command has its own, and the general one sends there.
TEST_F(BadInput, EveryCommandHasItsOwnHelp) {
  const DtsimOutcome general = run_dtsim("--help", true, kQuick);
  ASSERT_EQ(general.exit_code, 0);
  EXPECT_NE(general.output.find("dtsim COMMAND --help"), std::string::npos);
  for (const std::string command :
       {"run", "check", "sweep", "collect", "compare", "validate", "keys", "profiles", "collective", "workload"}) {
    EXPECT_NE(general.output.find("\n  " + command + " "), std::string::npos) << command;
    const DtsimOutcome own = run_dtsim(command + " --help", true, kQuick);
    EXPECT_EQ(own.exit_code, 0) << command;
    // sweep's help covers collect and compare.
    const std::string usage = command == "collect" || command == "compare" ? "sweep" : command;
    EXPECT_EQ(own.output.rfind("usage: dtsim " + usage + " ", 0), 0u) << command << "\n" << own.output.substr(0, 200);
  }
}

// A sweep rerun with every run done said "0 to run, 1 at a time".
TEST_F(BadInput, ARerunSweepWithNothingLeftSaysSo) {
  const std::string sweep = "sweep " + base_ + " --seeds 1 --jobs 1 --set training.max_steps=2 --out " + (dir_ / "sw").string();
  ASSERT_EQ(run_dtsim(sweep, true, 600).exit_code, 0);
  const DtsimOutcome again = run_dtsim(sweep, true, 600);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.output.rfind("dtsim sweep: 1 runs of " + base_ + " into " + (dir_ / "sw").string() +
                                   ": every run has a result already; nothing to run\n",
                               0),
            0u)
      << again.output;
  EXPECT_EQ(again.output.find("0 to run"), std::string::npos);
}

}  // namespace
}  // namespace dtsim::testing
