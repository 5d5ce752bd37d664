// `dtsim sweep --slurm`: the job-array script, run task by task as Slurm would run it (always), and submitted to
// a real Slurm controller when one answers on this machine (make test-slurm starts one; otherwise the test says
// why it skips).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli/run_dtsim.hpp"

namespace {

namespace fs = std::filesystem;
using dtsim::testing::run_dtsim;

const std::string kQuickstart = std::string(DTSIM_SOURCE_DIR) + "/scenarios/quickstart.ini";

std::string read_file(const fs::path& p) {
  std::ifstream f(p);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

int shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The statuses column of results.csv, in order.
std::vector<std::string> statuses(const fs::path& results) {
  std::vector<std::string> out;
  std::istringstream in(read_file(results));
  std::string line;
  std::getline(in, line);
  size_t column = 0;
  for (size_t start = 0, i = 0;; ++i) {
    const size_t comma = line.find(',', start);
    if (line.substr(start, comma - start) == "status") column = i;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  while (std::getline(in, line)) {
    // The run name is quoted (it holds commas); the fields after it do not.
    const size_t after = line[0] == '"' ? line.find('"', 1) + 2 : line.find(',') + 1;
    std::istringstream fields(line.substr(after));
    std::string field;
    for (size_t i = 1; i <= column && std::getline(fields, field, ','); ++i) {
    }
    out.push_back(field);
  }
  return out;
}

class SweepSlurm : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dtsim_slurm_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const auto o = run_dtsim("sweep " + kQuickstart + " --vary training.lr=0.05,0.1 --seeds 2 --set training.max_steps=30" +
                             " --set training.epochs=1 --out " + (dir_ / "sweep").string() + " --slurm " + script().string());
    ASSERT_EQ(o.exit_code, 0) << o.output;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path script() const { return dir_ / "array.sh"; }
  fs::path sweep() const { return dir_ / "sweep"; }
  fs::path dir_;
};

TEST_F(SweepSlurm, TheArrayScriptRunsEachRunAsOneTask) {
  const std::string text = read_file(script());
  EXPECT_NE(text.find("#SBATCH --array=0-3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("--task \"$SLURM_ARRAY_TASK_ID\""), std::string::npos) << text;
  EXPECT_TRUE(fs::exists(sweep() / "sweep.json"));
  EXPECT_FALSE(fs::exists(sweep() / "results.csv")) << "writing the script runs nothing";
  // Run the tasks as Slurm would, out of order.
  for (const int task : {2, 0, 3, 1})
    ASSERT_EQ(shell("SLURM_ARRAY_TASK_ID=" + std::to_string(task) + " bash " + script().string() + " > /dev/null 2>&1"), 0) << task;
  EXPECT_EQ(statuses(sweep() / "results.csv"), (std::vector<std::string>(4, "completed")));
  const std::string summary = read_file(sweep() / "summary.csv");
  EXPECT_NE(summary.find("\n0.05,2,completed:2,"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\n0.1,2,completed:2,"), std::string::npos) << summary;
  // A resubmitted task finds its result and runs nothing.
  const fs::path first = sweep() / "training.lr=0.05,run.seed=1" / "summary.json";
  const auto mtime = fs::last_write_time(first);
  ASSERT_EQ(shell("SLURM_ARRAY_TASK_ID=0 bash " + script().string() + " > /dev/null 2>&1"), 0);
  EXPECT_EQ(fs::last_write_time(first), mtime);
  // The same sweep run here agrees with the tasks' tables.
  const std::string tables = read_file(sweep() / "results.csv");
  const auto here = run_dtsim("sweep " + kQuickstart + " --vary training.lr=0.05,0.1 --seeds 2 --set training.max_steps=30" +
                              " --set training.epochs=1 --quiet --out " + sweep().string());
  ASSERT_EQ(here.exit_code, 0) << here.output;
  EXPECT_EQ(read_file(sweep() / "results.csv"), tables);
  // A task outside the array is bad input.
  EXPECT_EQ(shell("SLURM_ARRAY_TASK_ID=4 bash " + script().string() + " > /dev/null 2>&1"), 2);
}

// The script replaces a script it wrote before (rewriting it is how a changed sweep is resubmitted), and
// nothing else: not the scenario, not another file, not a folder; a refusal leaves no folder or file behind.
TEST_F(SweepSlurm, TheScriptReplacesOnlyAScriptItWrote) {
  const fs::path scenario = dir_ / "mine.ini";
  fs::copy_file(kQuickstart, scenario);
  const std::string scenario_text = read_file(scenario);
  std::ofstream(dir_ / "notes.txt") << "my notes\n";
  fs::create_directories(dir_ / "folder");
  const std::string sweep = "sweep " + scenario.string() + " --vary training.lr=0.05,0.1 --out " + (dir_ / "other").string();
  const std::vector<std::pair<std::string, std::string>> refused = {
      {scenario.string(), "is the sweep's scenario file"},
      {(dir_ / "notes.txt").string(), "exists and is not a script 'dtsim sweep --slurm' wrote"},
      {(dir_ / "folder").string(), "is a folder; give the script's file name"}};
  for (const auto& [target, reason] : refused) {
    const auto o = run_dtsim(sweep + " --slurm " + target, /*separate_stderr=*/true);
    EXPECT_EQ(o.exit_code, 2) << target;
    EXPECT_NE(o.err.find("dtsim: error: command line: --slurm: '" + target + "' " + reason), std::string::npos) << o.err;
  }
  EXPECT_EQ(read_file(scenario), scenario_text);
  EXPECT_EQ(read_file(dir_ / "notes.txt"), "my notes\n");
  EXPECT_FALSE(fs::exists(dir_ / "other")) << "a refused sweep makes no folder";
  EXPECT_TRUE(fs::is_empty(dir_ / "folder"));
  EXPECT_FALSE(fs::exists(dir_ / ".folder.tmp"));
  // The script the fixture wrote is replaced by the same command's new script.
  const auto again = run_dtsim("sweep " + kQuickstart + " --vary training.lr=0.05,0.1,0.2 --out " +
                               (dir_ / "sweep3").string() + " --slurm " + script().string());
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(read_file(script()).find("#SBATCH --array=0-2\n"), std::string::npos);
}

TEST_F(SweepSlurm, RunsOnALocalhostSlurmCluster) {
  if (shell("command -v sbatch > /dev/null 2>&1 && timeout 15 sinfo -h > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "no Slurm controller answers here (sbatch missing or sinfo failed); 'make test-slurm' starts one";
  ASSERT_EQ(shell("timeout 900 sbatch --wait " + script().string() + " > " + (dir_ / "sbatch.log").string() + " 2>&1"), 0)
      << read_file(dir_ / "sbatch.log");
  EXPECT_EQ(statuses(sweep() / "results.csv"), (std::vector<std::string>(4, "completed")));
}

}  // namespace
