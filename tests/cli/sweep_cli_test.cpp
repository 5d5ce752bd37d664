// `dtsim sweep` and `dtsim collect` through the executable: the product of the --vary lists and seeds, one
// result per run in results.csv and per group in summary.csv (checked against each run's own summary.json
// and the closed forms of mean and sample standard deviation), resuming after a rerun, a SIGKILL and a
// SIGINT, and bad input refused before anything runs.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/background_dtsim.hpp"
#include "tests/cli/run_dtsim.hpp"

namespace {

namespace fs = std::filesystem;
using dtsim::testing::BackgroundRun;
using dtsim::testing::run_dtsim;
using dtsim::testing::wait_until;

const std::string kQuickstart = std::string(DTSIM_SOURCE_DIR) + "/scenarios/quickstart.ini";
// A short run of the quickstart: 30 steps, evaluated at the end.
const std::string kShort = " --set training.max_steps=30 --set training.epochs=1";

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// A CSV file as rows of fields (RFC 4180 quoting), the header first.
std::vector<std::vector<std::string>> read_csv(const fs::path& p) {
  std::vector<std::vector<std::string>> rows;
  const std::string text = read_file(p);
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += text[++i];
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
    } else if (c == '\n') {
      row.push_back(field);
      rows.push_back(row);
      row.clear();
      field.clear();
    } else {
      field += c;
    }
  }
  return rows;
}

// Rows as maps from column name to field.
std::vector<std::map<std::string, std::string>> records(const fs::path& p) {
  const auto rows = read_csv(p);
  std::vector<std::map<std::string, std::string>> out;
  for (size_t r = 1; r < rows.size(); ++r) {
    std::map<std::string, std::string> rec;
    for (size_t c = 0; c < rows[0].size() && c < rows[r].size(); ++c) rec[rows[0][c]] = rows[r][c];
    out.push_back(rec);
  }
  return out;
}

double num(const std::map<std::string, std::string>& rec, const std::string& column) {
  const auto it = rec.find(column);
  if (it == rec.end() || it->second.empty()) return std::nan("");
  return std::stod(it->second);
}

bool folder_lock_is_free(const fs::path& folder) {
  const int fd = ::open((folder / ".dtsim-run.lock").c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return true;
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return free;
}

class Sweep : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dtsim_sweep_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path out() const { return dir_ / "sweep"; }
  fs::path dir_;
};

TEST_F(Sweep, TwoByTwoByTwoSeedsGivesEightRowsAndGroupStatistics) {
  const std::string args = "sweep " + kQuickstart + " --vary training.lr=0.05,0.1 --vary collective.algorithm=ring,tree" +
                           " --seeds 2 --jobs 2 --out " + out().string() + kShort;
  const auto first = run_dtsim(args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const auto results = records(out() / "results.csv");
  ASSERT_EQ(results.size(), 8u);
  // Odometer order, the last varied key fastest; each row is what its run's own summary.json says.
  const std::vector<std::string> lrs = {"0.05", "0.05", "0.05", "0.05", "0.1", "0.1", "0.1", "0.1"};
  const std::vector<std::string> algorithms = {"ring", "ring", "tree", "tree", "ring", "ring", "tree", "tree"};
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& row = results[i];
    EXPECT_EQ(row.at("training.lr"), lrs[i]);
    EXPECT_EQ(row.at("collective.algorithm"), algorithms[i]);
    EXPECT_EQ(row.at("run.seed"), std::to_string(i % 2 + 1));
    EXPECT_EQ(row.at("status"), "completed");
    const nlohmann::json s = nlohmann::json::parse(read_file(out() / row.at("run") / "summary.json"));
    EXPECT_EQ(s["seed"].get<int>(), static_cast<int>(i % 2 + 1));
    EXPECT_EQ(num(row, "final_test_accuracy"), s["final_test_accuracy"].get<double>());
    EXPECT_EQ(num(row, "simulated_time_s"), s["simulated_time_s"].get<double>());
    EXPECT_EQ(num(row, "bytes_sent"), s["bytes_sent"].get<double>());
    EXPECT_EQ(num(row, "steps"), 30.0);
  }
  // The seed is applied: some group's two seeds end at different accuracies.
  bool seeds_differ = false;
  for (size_t i = 0; i < 8; i += 2) seeds_differ |= num(results[i], "final_test_accuracy") != num(results[i + 1], "final_test_accuracy");
  EXPECT_TRUE(seeds_differ);

  // summary.csv: one row per (lr, algorithm), mean = (a + b) / 2, sample std = |a - b| / sqrt(2).
  const auto groups = records(out() / "summary.csv");
  ASSERT_EQ(groups.size(), 4u);
  for (size_t g = 0; g < 4; ++g) {
    const auto& a = results[2 * g];
    const auto& b = results[2 * g + 1];
    EXPECT_EQ(groups[g].at("training.lr"), a.at("training.lr"));
    EXPECT_EQ(groups[g].at("collective.algorithm"), a.at("collective.algorithm"));
    EXPECT_EQ(groups[g].count("run.seed"), 0u);
    EXPECT_EQ(groups[g].at("runs"), "2");
    EXPECT_EQ(groups[g].at("statuses"), "completed:2");
    for (const std::string column : {"final_test_accuracy", "simulated_time_s", "final_test_loss"}) {
      const double x = num(a, column), y = num(b, column);
      const double scale = std::max(1e-300, std::abs(x) + std::abs(y));
      EXPECT_NEAR(num(groups[g], column + "_mean"), (x + y) / 2, 1e-12 * scale) << column;
      EXPECT_NEAR(num(groups[g], column + "_std"), std::abs(x - y) / std::sqrt(2.0), 1e-12 * scale) << column;
      EXPECT_EQ(num(groups[g], column + "_min"), std::min(x, y)) << column;
      EXPECT_EQ(num(groups[g], column + "_max"), std::max(x, y)) << column;
    }
  }

  // The sweep runs what 'dtsim run' runs.
  const fs::path single = dir_ / "single";
  const auto one = run_dtsim("run " + kQuickstart + " --quiet --out " + single.string() + kShort +
                             " --set training.lr=0.1 --set collective.algorithm=tree --set run.seed=2");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const nlohmann::json s = nlohmann::json::parse(read_file(single / "summary.json"));
  EXPECT_EQ(num(results[7], "final_test_accuracy"), s["final_test_accuracy"].get<double>());
  EXPECT_EQ(num(results[7], "simulated_time_s"), s["simulated_time_s"].get<double>());
  // Each row ends with its run's status_reason, in the run's words.
  for (const auto& row : results) {
    const nlohmann::json own = nlohmann::json::parse(read_file(out() / row.at("run") / "summary.json"));
    EXPECT_EQ(row.at("status_reason"), own["status_reason"].get<std::string>()) << row.at("run");
    EXPECT_FALSE(row.at("status_reason").empty()) << row.at("run");
  }

  // A rerun finds every result and runs nothing; collect rebuilds the same tables.
  const auto mtime = fs::last_write_time(out() / results[0].at("run") / "summary.json");
  const std::string results_text = read_file(out() / "results.csv");
  const std::string summary_text = read_file(out() / "summary.csv");
  const auto again = run_dtsim(args);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find(": every run has a result already; nothing to run\n"), std::string::npos) << again.output;
  EXPECT_EQ(fs::last_write_time(out() / results[0].at("run") / "summary.json"), mtime);
  EXPECT_EQ(read_file(out() / "results.csv"), results_text);
  fs::remove(out() / "results.csv");
  fs::remove(out() / "summary.csv");
  const auto collected = run_dtsim("collect " + out().string());
  ASSERT_EQ(collected.exit_code, 0) << collected.output;
  EXPECT_EQ(read_file(out() / "results.csv"), results_text);
  EXPECT_EQ(read_file(out() / "summary.csv"), summary_text);

  // compare: one line per group, the mean ± std of each chosen column over its two seeds, a cost with its range.
  const auto table = run_dtsim("compare " + out().string() + " --columns final_test_accuracy,cost_mid");
  ASSERT_EQ(table.exit_code, 0) << table.output;
  const std::vector<std::string> lines = dtsim::testing::lines_of(table.output);
  ASSERT_EQ(lines.size(), 7u) << table.output;  // title, blank, header, 4 groups
  EXPECT_NE(lines[0].find("mean ± sample std over 2 seeds"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[2].rfind("training.lr", 0), 0u) << lines[2];
  EXPECT_NE(lines[2].find("final accuracy"), std::string::npos) << lines[2];
  const auto g4 = [](double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return std::string(buf);
  };
  for (size_t g = 0; g < 4; ++g) {
    const double x = num(results[2 * g], "final_test_accuracy"), y = num(results[2 * g + 1], "final_test_accuracy");
    const std::string accuracy = g4((x + y) / 2) + " ± " + g4(std::abs(x - y) / std::sqrt(2.0));
    EXPECT_NE(lines[3 + g].find(accuracy), std::string::npos) << lines[3 + g] << " lacks " << accuracy;
    const std::string range = "[" + g4(num(results[2 * g], "cost_low")) + "-" + g4(num(results[2 * g], "cost_high")) + "]";
    EXPECT_NE(lines[3 + g].find(range), std::string::npos) << lines[3 + g] << " lacks " << range;
  }
  const auto bad = run_dtsim("compare " + out().string() + " --columns final_accuracy", true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err.rfind("dtsim: error: command line: --columns: 'final_accuracy' is not a number column of a run's "
                          "results", 0), 0u) << bad.err;
  EXPECT_TRUE(bad.output.empty()) << "nothing printed before the error: " << bad.output;
  // A column of results.csv that holds no number (the run's name, its status) cannot be averaged; no column at
  // all is no table.
  for (const std::string columns : {"run", "status", "''"}) {
    const auto refused = run_dtsim("compare " + out().string() + " --columns " + columns, true);
    EXPECT_EQ(refused.exit_code, 2) << columns;
    EXPECT_NE(refused.err.find("--columns"), std::string::npos) << refused.err;
  }
}

// A sweep's folder is not a run's, and the other way round: a folder that is both would read as either.
TEST_F(Sweep, RunAndSweepFoldersAreNotMixedUp) {
  const auto sweep = run_dtsim("sweep " + kQuickstart + " --vary training.lr=0.05,0.1 --quiet --slurm " +
                               (dir_ / "s.sh").string() + " --out " + out().string());
  ASSERT_EQ(sweep.exit_code, 0) << sweep.output;
  const auto into_sweep = run_dtsim("run " + kQuickstart + " --quiet --set training.max_steps=2 --out " + out().string(), true);
  EXPECT_EQ(into_sweep.exit_code, 2);
  EXPECT_NE(into_sweep.err.find("is a sweep's folder (it holds sweep.json)"), std::string::npos) << into_sweep.err;
  EXPECT_FALSE(fs::exists(out() / "summary.json"));
  const fs::path run_dir = dir_ / "one-run";
  ASSERT_EQ(run_dtsim("run " + kQuickstart + " --quiet --set training.max_steps=2 --out " + run_dir.string()).exit_code, 0);
  const auto into_run = run_dtsim("sweep " + kQuickstart + " --vary training.lr=0.05,0.1 --quiet --slurm " +
                                  (dir_ / "t.sh").string() + " --out " + run_dir.string(), true);
  EXPECT_EQ(into_run.exit_code, 2);
  EXPECT_NE(into_run.err.find("is a run's folder (it holds summary.json)"), std::string::npos) << into_run.err;
  EXPECT_FALSE(fs::exists(run_dir / "sweep.json"));
}

// A group whose runs diverged says so beside its means, which are not a finished run's numbers.
TEST_F(Sweep, CompareMarksGroupsWhoseRunsDiverged) {
  const auto sweep = run_dtsim("sweep " + kQuickstart + " --vary training.lr=0.05,50 --jobs 1 --quiet --out " +
                               out().string() + " --set training.max_steps=20 --set training.epochs=1");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.output;
  const auto table = run_dtsim("compare " + out().string() + " --columns final_test_accuracy");
  ASSERT_EQ(table.exit_code, 0) << table.output;
  const std::vector<std::string> lines = dtsim::testing::lines_of(table.output);
  ASSERT_EQ(lines.size(), 5u) << table.output;
  EXPECT_EQ(lines[3].find("diverged"), std::string::npos) << lines[3];
  EXPECT_EQ(lines[4].rfind("50", 0), 0u) << lines[4];
  EXPECT_NE(lines[4].find("1 (1 diverged)"), std::string::npos) << lines[4];
}

TEST_F(Sweep, AKilledSweepResumesWithExactlyOneResultPerRun) {
  const std::vector<std::string> args = {"sweep", kQuickstart, "--vary", "training.lr=0.05,0.1,0.2", "--jobs", "1",
                                         "--out", out().string(), "--set", "training.max_steps=30",
                                         "--set", "training.epochs=1"};
  const fs::path first_run = out() / "training.lr=0.05";
  const fs::path second_run = out() / "training.lr=0.1";
  fs::file_time_type first_mtime;
  {
    BackgroundRun sweep(args, dir_ / "stderr1");
    ASSERT_TRUE(wait_until([&] { return fs::exists(first_run / "summary.json"); }));
    first_mtime = fs::last_write_time(first_run / "summary.json");
    // Let the second run start, then kill the sweep outright.
    ASSERT_TRUE(wait_until([&] { return fs::exists(second_run / "dtsim.log"); }));
    EXPECT_EQ(sweep.stop(SIGKILL), -1);
  }
  // The kernel stops the sweep's child with it: its folder's lock is released.
  EXPECT_TRUE(wait_until([&] { return folder_lock_is_free(second_run); }, 60));

  const auto resumed = run_dtsim(dtsim::testing::join_args(args));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const auto results = records(out() / "results.csv");
  ASSERT_EQ(results.size(), 3u);
  for (const auto& row : results) EXPECT_EQ(row.at("status"), "completed") << row.at("run");
  EXPECT_EQ(fs::last_write_time(first_run / "summary.json"), first_mtime) << "the finished run was not redone";
  for (const auto& run : fs::directory_iterator(out())) {
    if (!run.is_directory()) continue;
    for (const auto& entry : fs::directory_iterator(run.path()))
      EXPECT_NE(entry.path().filename().string().rfind("partial-run-", 0), 0u) << entry.path();
  }
}

TEST_F(Sweep, AnInterruptedSweepKeepsWhatItMeasuredAndResumes) {
  // Long enough runs (2 epochs of the quickstart) that the signal lands while the first one trains.
  const std::vector<std::string> args = {"sweep", kQuickstart, "--vary", "training.lr=0.05,0.1", "--jobs", "1",
                                         "--out", out().string(), "--set", "training.epochs=2"};
  const fs::path first_run = out() / "training.lr=0.05";
  {
    BackgroundRun sweep(args, dir_ / "stderr1");
    // Wait for the first evaluation row in the run's staging folder.
    ASSERT_TRUE(wait_until([&] {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(first_run, ec))
        if (e.path().filename().string().rfind("partial-run-", 0) == 0 && dtsim::testing::line_count(e.path() / "metrics.csv") >= 3)
          return true;
      return false;
    }));
    EXPECT_EQ(sweep.stop(SIGINT), 128 + SIGINT);
  }
  auto results = records(out() / "results.csv");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].at("status"), "interrupted");
  EXPECT_EQ(results[1].at("status"), "missing");
  EXPECT_TRUE(fs::exists(first_run / "metrics.partial.csv"));

  const auto resumed = run_dtsim(dtsim::testing::join_args(args));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  results = records(out() / "results.csv");
  ASSERT_EQ(results.size(), 2u);
  for (const auto& row : results) EXPECT_EQ(row.at("status"), "completed") << row.at("run");
}

TEST_F(Sweep, RefusesADifferentSweepInTheSameFolder) {
  ASSERT_EQ(run_dtsim("sweep " + kQuickstart + " --seeds 1 --quiet --out " + out().string() + kShort).exit_code, 0);
  const std::string before = read_file(out() / "results.csv");
  const auto other = run_dtsim("sweep " + kQuickstart + " --seeds 2 --quiet --out " + out().string() + kShort, true);
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_EQ(other.err.rfind("dtsim: error: command line (--out): '" + out().string() + "' holds a different sweep", 0), 0u)
      << other.err;
  EXPECT_EQ(read_file(out() / "results.csv"), before);
  EXPECT_FALSE(fs::exists(out() / "run.seed=2"));
}

// The same sweep is the same file whatever folder it was started from; the same path with other bytes is
// not (a resume used to mix runs made from the old and the new file, and a relative and an absolute path to
// one file were two sweeps).
TEST_F(Sweep, AResumeKnowsTheScenarioFileByItsPlaceAndBytes) {
  const fs::path scenario = dir_ / "qs.ini";
  fs::copy_file(kQuickstart, scenario);
  ASSERT_EQ(run_dtsim("sweep " + scenario.string() + " --seeds 1 --quiet --out " + out().string() + kShort).exit_code, 0);
  const std::string before = read_file(out() / "results.csv");
  // By a relative path to the same file: the same sweep, with nothing left to run.
  const fs::path relative = fs::relative(scenario, fs::current_path());
  ASSERT_TRUE(relative.is_relative());
  const auto again = run_dtsim("sweep " + relative.string() + " --seeds 1 --quiet --out " + out().string() + kShort, true);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(read_file(out() / "results.csv"), before);
  {
    std::ofstream(scenario, std::ios::app) << "\n# an edit\n";
  }
  const auto changed = run_dtsim("sweep " + scenario.string() + " --seeds 1 --quiet --out " + out().string() + kShort, true);
  EXPECT_EQ(changed.exit_code, 2);
  EXPECT_NE(changed.err.find("as it was before the file changed"), std::string::npos) << changed.err;
  EXPECT_EQ(read_file(out() / "results.csv"), before);
}

// --slurm naming the sweep's own --out folder was refused only after the folder and its manifest were made,
// which then blocked the next sweep into it.
TEST_F(Sweep, ASlurmScriptInPlaceOfTheOutFolderIsRefusedLeavingNothing) {
  const auto o = run_dtsim("sweep " + kQuickstart + " --seeds 1 --quiet --out " + out().string() + " --slurm " +
                               out().string() + kShort,
                           true);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--slurm: '" + out().string() + "' is the sweep's --out folder"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(out()));
}

TEST_F(Sweep, RefusesBadInputBeforeRunningAnything) {
  struct Case {
    std::string flags;
    std::string first_line;
  };
  const std::vector<Case> cases = {
      {"--vary training.lr", "dtsim: error: command line (--vary): 'training.lr' is not section.key=v1,v2,..."},
      {"--vary training.lr=0.1,,0.2", "dtsim: error: command line (--vary): training.lr: an empty value in '0.1,,0.2'"},
      {"--vary training.lrr=0.1,0.2", "dtsim: error: command line (--vary): training.lrr: unknown key; did you mean 'training.lr'?"},
      {"--vary training.lr=-1,0.1", "dtsim: error: command line (--vary): training.lr: -1 is out of range"},
      {"--vary training.lr=0.1,0.1", "dtsim: error: command line (--vary): training.lr: the value '0.1' is listed twice"},
      {"--vary ps.staleness_bound=1,2", "dtsim: error: command line (--vary): ps.staleness_bound: is varied but has no effect"},
      // The same value spelt twice is one run twice; spaces around a value are not part of it.
      {"--vary training.lr=0.1,1e-1", "dtsim: error: command line (--vary): training.lr: the values '0.1' and '1e-1' are the same"},
      {"--vary fabric.bandwidth=25GB/s,200Gbps",
       "dtsim: error: command line (--vary): fabric.bandwidth: the values '25GB/s' and '200Gbps' are the same"},
      {"--vary 'cluster.workers=4, 4'", "dtsim: error: command line (--vary): cluster.workers: the value '4' is listed twice"},
      {"--seeds 2 --vary run.seed=1,2", "dtsim: error: command line (--seeds): run.seed: varied twice; give either --seeds"},
      {"--vary run.seed=1,2 --vary run.seed=3", "dtsim: error: command line (--vary): run.seed: varied twice; put all its values in one --vary"},
      {"--vary training.lr=0.1 --set training.lr=0.2", "dtsim: error: command line (--set): training.lr: is also varied"},
      {"--seeds 0", "dtsim: error: command line: --seeds: '0' is not a whole number from 1 to 100000"},
      {"--jobs 0 --seeds 2", "dtsim: error: command line: --jobs: '0' is not a whole number from 1 to 4096"},
      {"", "dtsim: error: command line: --vary: nothing to sweep"},
      {"--vary data.dataset=a/b,a_b", "dtsim: error: command line (--vary): runs 'data.dataset=a/b' and 'data.dataset=a_b' would share"},
      // What only the model or the data reveal, in a run that is not the first (it used to run the first).
      {"--set compression.kind=topk --vary compression.min_tensor_size=0,100000000",
       "dtsim: error: command line (--vary): compression.min_tensor_size: every tensor of the model is smaller"},
      {"--set compression.kind=topk --vary compression.start_step=0,100000 --seeds 2",
       "dtsim: error: command line (--vary): compression.start_step: the run averages gradients in its first"},
  };
  for (const Case& c : cases) {
    fs::remove_all(out());
    const auto o = run_dtsim("sweep " + kQuickstart + " " + c.flags + " --out " + out().string(), true);
    EXPECT_EQ(o.exit_code, 2) << c.flags;
    EXPECT_EQ(o.err.rfind(c.first_line, 0), 0u) << c.flags << "\n" << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_FALSE(fs::exists(out())) << c.flags << ": a refused sweep leaves no folder";
  }
  fs::create_directories(dir_ / "nothing");  // (a missing one is said to be missing: the corpus)
  const auto none = run_dtsim("collect " + (dir_ / "nothing").string(), true);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err.rfind("dtsim: error: " + (dir_ / "nothing").string() + ": no sweep.json", 0), 0u) << none.err;
}

// A group's statistics are over its runs with a result: an interrupted run's partial numbers (rerun on
// resuming) used to be averaged in. Equal values have a spread of exactly 0, and the same sweep with its --set
// flags in another order resumes. A sweep refused in a run's folder leaves no lock file there.
TEST_F(Sweep, StatisticsCountResultsOnlyAndResumesIgnoreTheOrderOfSets) {
  const std::string sets = " --set training.max_steps=3 --set data.train_samples=2048 --set data.test_samples=300";
  const auto first = run_dtsim("sweep " + kQuickstart + " --seeds 3 --jobs 1 --out " + out().string() + sets, true);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  // Seed 3's run as an interrupted one would have left it: its own numbers, far from the others'.
  const fs::path third = out() / "run.seed=3" / "summary.json";
  nlohmann::json s = nlohmann::json::parse(read_file(third));
  s["status"] = "interrupted";
  s["final_test_accuracy"] = 0.0;
  std::ofstream(third) << s.dump(2);
  const auto collected = run_dtsim("collect " + out().string(), true);
  ASSERT_EQ(collected.exit_code, 0) << collected.err;
  std::vector<double> done;
  for (const int seed : {1, 2})
    done.push_back(nlohmann::json::parse(read_file(out() / ("run.seed=" + std::to_string(seed)) / "summary.json"))
                       ["final_test_accuracy"].get<double>());
  const auto groups = records(out() / "summary.csv");
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].at("statuses"), "completed:2 interrupted:1");
  EXPECT_NEAR(num(groups[0], "final_test_accuracy_mean"), (done[0] + done[1]) / 2, 1e-12);
  EXPECT_DOUBLE_EQ(num(groups[0], "final_test_accuracy_min"), std::min(done[0], done[1]));
  // The three seeds' steps are equal: their spread is 0, not rounding noise.
  EXPECT_EQ(groups[0].at("steps_std"), "0");
  // The same sweep, its --set flags reversed and a value spelt otherwise: it resumes (and reruns the
  // interrupted run).
  const std::string reversed = " --set data.test_samples=3e2 --set data.train_samples=2048 --set training.max_steps=3";
  const auto again = run_dtsim("sweep " + kQuickstart + " --seeds 3 --jobs 1 --out " + out().string() + reversed, true);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.output.find("2 with a result already, 1 to run"), std::string::npos) << again.output;
  // A run made by hand into a run folder, with other values than the planned run's: not its result.
  const fs::path second = out() / "run.seed=2" / "summary.json";
  nlohmann::json by_hand = nlohmann::json::parse(read_file(second));
  for (nlohmann::json& set : by_hand["sets"])
    if (set == "run.seed=2") set = "run.seed=7";
  std::ofstream(second) << by_hand.dump(2);
  ASSERT_EQ(run_dtsim("collect " + out().string(), true).exit_code, 0);
  EXPECT_EQ(records(out() / "summary.csv")[0].at("statuses"), "another run:1 completed:2");
  // A sweep into a run's folder: refused, and nothing of the sweep's left there.
  const fs::path run_folder = out() / "run.seed=1";
  const auto refused = run_dtsim("sweep " + kQuickstart + " --seeds 2 --out " + run_folder.string() + sets, true);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_FALSE(fs::exists(run_folder / ".dtsim-sweep.lock"));
  const auto empty_out = run_dtsim("sweep " + kQuickstart + " --seeds 2 --out ''" + sets, true);
  EXPECT_EQ(empty_out.exit_code, 2);
  EXPECT_EQ(empty_out.err.rfind("dtsim: error: command line: --out: an empty folder name", 0), 0u) << empty_out.err;
  // compare on a run folder whose summary.json cannot be read says so (it blamed --columns).
  std::ofstream(run_folder / "summary.json") << "{ not json";
  const auto unreadable = run_dtsim("compare " + run_folder.string(), true);
  EXPECT_EQ(unreadable.exit_code, 2);
  EXPECT_NE(unreadable.err.find("no run has a number to compare (1 unreadable summary.json)"), std::string::npos)
      << unreadable.err;
}

TEST_F(Sweep, TimingOnlyWorkloadsCompareNetworks) {
  const auto o = run_dtsim("sweep " + std::string(DTSIM_SOURCE_DIR) + "/scenarios/workload_bert_large.ini" +
                           " --vary fabric.profile=ib-hdr-200,roce-100 --quiet --out " + out().string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const auto results = records(out() / "results.csv");
  ASSERT_EQ(results.size(), 2u);
  for (const auto& row : results) {
    const nlohmann::json s = nlohmann::json::parse(read_file(out() / row.at("run") / "summary.json"));
    EXPECT_EQ(num(row, "step_s"), s["simulation"]["step_s"].get<double>());
    EXPECT_EQ(num(row, "cost_per_unit_low"), s["simulation"]["cost_per_unit"][0].get<double>());
    EXPECT_EQ(row.count("final_test_accuracy"), 0u) << "no accuracy column without numerics";
  }
  // The same bytes on a slower fabric take longer.
  EXPECT_EQ(num(results[0], "bytes_sent"), num(results[1], "bytes_sent"));
  EXPECT_LT(num(results[0], "step_s"), num(results[1], "step_s"));
}

TEST_F(Sweep, CompareTakesSeparateRunFoldersOneRowEach) {
  const std::string quickstart = std::string(DTSIM_SOURCE_DIR) + "/scenarios/quickstart.ini";
  const fs::path a = dir_ / "hdr", b = dir_ / "ethernet";
  ASSERT_EQ(run_dtsim("run " + quickstart + " --quiet --set training.max_steps=4 --out " + a.string()).exit_code, 0);
  ASSERT_EQ(run_dtsim("run " + quickstart + " --quiet --set training.max_steps=4 --set fabric.profile=eth-25g-tcp --out " +
                      b.string()).exit_code, 0);
  const auto table = run_dtsim("compare " + a.string() + " " + b.string() +
                               " --columns simulated_time_s,bytes_sent,busiest_link_utilisation");
  ASSERT_EQ(table.exit_code, 0) << table.output;
  const std::vector<std::string> lines = dtsim::testing::lines_of(table.output);
  ASSERT_EQ(lines.size(), 5u) << table.output;  // title, blank, header, one row per folder
  EXPECT_EQ(lines[0], "2 run folders");
  EXPECT_EQ(lines[2].rfind("run", 0), 0u) << lines[2];
  EXPECT_NE(lines[2].find("busiest link (mean util.)"), std::string::npos) << lines[2];
  const auto g4 = [](double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return std::string(buf);
  };
  for (const auto& [line, folder] : {std::pair{lines[3], a}, std::pair{lines[4], b}}) {
    const nlohmann::json s = nlohmann::json::parse(read_file(folder / "summary.json"));
    EXPECT_EQ(line.rfind(folder.string(), 0), 0u) << line;
    EXPECT_NE(line.find(g4(s["simulated_time_s"].get<double>())), std::string::npos) << line;
    EXPECT_NE(line.find(g4(s["busiest_link"]["mean_utilisation"].get<double>())), std::string::npos) << line;
  }
  // The same folder twice would read as two runs of one configuration.
  const auto twice = run_dtsim("compare " + a.string() + " " + b.string() + " " + a.string() + "/", true);
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("is given twice (as '" + a.string() + "')"), std::string::npos) << twice.err;
  const auto not_a_run = run_dtsim("compare " + a.string() + " " + dir_.string(), true);
  EXPECT_EQ(not_a_run.exit_code, 2);
  EXPECT_NE(not_a_run.err.find("holds no summary.json"), std::string::npos) << not_a_run.err;
}

// Costs carry their currency: named once in the header when every run has the same, in every cell when they
// differ (a CNY and a USD bill used to stand side by side under one 'cost' header).
TEST_F(Sweep, CompareNamesTheCurrencyOfEveryCost) {
  const std::string quickstart = std::string(DTSIM_SOURCE_DIR) + "/scenarios/quickstart.ini";
  const fs::path cny = dir_ / "cny", usd = dir_ / "usd";
  ASSERT_EQ(run_dtsim("run " + quickstart + " --quiet --set training.max_steps=4 --out " + cny.string()).exit_code, 0);
  ASSERT_EQ(run_dtsim("run " + quickstart + " --quiet --set training.max_steps=4 --set gpu.price_currency=USD "
                      "--set gpu.price_low=2 --set gpu.price_high=3 --out " + usd.string()).exit_code, 0);
  const auto one = run_dtsim("compare " + cny.string() + " --columns cost_mid");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("cost (CNY) [low-high]"), std::string::npos) << one.output;
  const auto both = run_dtsim("compare " + cny.string() + " " + usd.string() + " --columns cost_mid");
  ASSERT_EQ(both.exit_code, 0) << both.output;
  const std::vector<std::string> lines = dtsim::testing::lines_of(both.output);
  ASSERT_EQ(lines.size(), 5u) << both.output;
  EXPECT_NE(lines[2].find("cost [low-high]"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find(" CNY ["), std::string::npos) << lines[3];
  EXPECT_NE(lines[4].find(" USD ["), std::string::npos) << lines[4];
}

}  // namespace
