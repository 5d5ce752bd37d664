// Inputs that used to hang dtsim or keep it silent for minutes (issue 57): FIFOs and devices where a file is
// expected, at every entry point that reads one, a sweep of 100,000 seeds, and two runs racing for one --out.
// Every command runs under a short timeout, so that a hang fails its test (exit 124) instead of the suite.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/background_dtsim.hpp"
#include "tests/cli/run_dtsim.hpp"
#include "tests/cli/scratch_folder.hpp"

namespace dtsim::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kQuick = 30;  // seconds: far more than any of these refusals takes

class Hangs : public ScratchFolder {
 protected:
  fs::path fifo(const std::string& name) const {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    EXPECT_EQ(::mkfifo(p.c_str(), 0644), 0) << p;
    return p;
  }

  // `dtsim <args>` must refuse at once: exit 2, one line naming what is not a regular file.
  void refused(const std::string& args, const std::string& what = "is not a regular file") const {
    const DtsimOutcome o = run_dtsim(args, true, kQuick);
    EXPECT_NE(o.exit_code, 124) << args << ": hung";
    EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.err;
    EXPECT_NE(o.err.find(what), std::string::npos) << args << "\n" << o.err;
    EXPECT_EQ(o.err.rfind("dtsim: error: ", 0), 0u) << args << "\n" << o.err;
  }
};

// Data files, scenarios and profiles refused FIFOs already; workload files did not (dtsim workload, the
// catalog folder, workload.name), nor did the other files a command reads.
TEST_F(Hangs, AFifoIsRefusedWhereverAFileIsRead) {
  // Workload files, by path and in the catalog folder, at every command that reads them.
  const std::string ff = fifo("ff.json").string();
  refused("workload " + ff);
  refused("workload " + ff + " --simulate");
  refused("run " + base_ + " --set workload.name=" + ff + " --out " + (dir_ / "out").string());
  EXPECT_FALSE(fs::exists(dir_ / "out")) << "a refused run writes nothing";
  refused("check " + base_ + " --set workload.name=" + ff);
  refused("check " + base_ + " --set workload.name=" + ff + " --set workload.proxy=true");
  refused("sweep " + base_ + " --seeds 2 --set workload.name=" + ff + " --out " + (dir_ / "sw").string() +
          " --slurm " + (dir_ / "sw.sh").string());
  EXPECT_FALSE(fs::exists(dir_ / "sw"));
  const fs::path catalog = dir_ / "catalog";
  fs::create_directories(catalog);
  fs::copy_file(fs::path(DTSIM_SOURCE_DIR) / "models/workloads/resnet50.json", catalog / "resnet50.json");
  fifo("catalog/x.json");
  ::setenv("DTSIM_WORKLOAD_DIR", catalog.c_str(), 1);
  refused("workload");  // the catalog's listing reads every file
  refused("workload x");
  refused("check " + base_ + " --set workload.name=x");
  EXPECT_EQ(run_dtsim("workload resnet50", true, kQuick).exit_code, 0) << "the other files are still read";
  ::unsetenv("DTSIM_WORKLOAD_DIR");

  // Scenario files: run, check, sweep and a sweep's Slurm task.
  const std::string scenario = fifo("fifo.ini").string();
  refused("check " + scenario);
  refused("run " + scenario + " --out " + (dir_ / "out").string());
  refused("sweep " + scenario + " --seeds 2 --out " + (dir_ / "sw").string());
  refused("sweep " + scenario + " --seeds 2 --task 0 --out " + (dir_ / "sw").string());  // used to hang
  EXPECT_FALSE(fs::exists(dir_ / "sw"));

  // Profiles (by path, for a key and for a command's flag), a data file, a partition file, a base model.
  const std::string profile = fifo("gpu.ini").string();
  refused("check " + base_ + " --set gpu.profile=" + profile);
  refused("check " + base_ + " --set cluster.gpus_per_node=2 --set cluster.intra_node_fabric=" + profile);
  refused("workload llama-7b --gpu " + profile);
  refused("collective --profile " + profile);
  const fs::path data = dir_ / "data";
  fs::create_directories(data);
  for (const char* name : {"train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"})
    fs::copy_file(fs::path("/usr/share/datasets/fashion-mnist") / name, data / name);
  fifo("data/train-images-idx3-ubyte.gz");
  refused("check " + base_ + " --set data.path=" + data.string(), "train-images-idx3-ubyte.gz: is not a regular file");
  refused("check " + base_ + " --set data.partition=file --set data.partition_file=" + fifo("shards.json").string());
  refused("check " + base_ + " --set model.arch=transformer --set data.dataset=qa --set transformer.base=" +
          fifo("model.bin").string());
  refused("check " + base_ + " --set model.arch=transformer --set data.dataset=qa --set transformer.base=/dev/zero");

  // What sweep, collect and compare read back: a script to replace, a manifest, a run's summary.
  refused("sweep " + base_ + " --seeds 2 --out " + (dir_ / "sw").string() + " --slurm " + fifo("s.sh").string());
  fs::create_directories(dir_ / "sweep");
  fifo("sweep/sweep.json");
  refused("collect " + (dir_ / "sweep").string());
  refused("compare " + (dir_ / "sweep").string());
}

// A run folder's summary.json that is a FIFO: compare reads every other folder, and says which one it could not.
TEST_F(Hangs, CompareSaysWhichSummaryItCouldNotRead) {
  const fs::path a = dir_ / "a", b = dir_ / "b";
  ASSERT_EQ(run_dtsim("run " + base_ + " --quiet --out " + a.string() + " --set training.max_steps=4", true, 300).exit_code, 0);
  fs::create_directories(b);
  fifo("b/summary.json");
  const DtsimOutcome o = run_dtsim("compare " + a.string() + " " + b.string(), true, kQuick);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "dtsim: warning: " + (b / "summary.json").string() +
                       ": is not a regular file (a FIFO, a device or a socket); the run counts as one without a result\n");
  EXPECT_NE(o.output.find("0 of 1 (1 unreadable)"), std::string::npos) << o.output;
}

// 100,000 seeds were checked one by one, at about 2 ms each: 200 s without a word before the script was written.
// Runs that differ only in their seeds are now checked once.
TEST_F(Hangs, AHundredThousandSeedsAreCheckedQuickly) {
  const auto start = std::chrono::steady_clock::now();
  const DtsimOutcome o = run_dtsim("sweep " + base_ + " --seeds 100000 --out " + (dir_ / "sw").string() + " --slurm " +
                                       (dir_ / "s.sh").string(),
                                   true, 120);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_LT(seconds, 30.0) << "2 s on the development machine";
  EXPECT_NE(file_text(dir_ / "s.sh").find("--array=0-99999"), std::string::npos);
  // Every seed is still checked against its key.
  const DtsimOutcome bad = run_dtsim("sweep " + base_ + " --vary run.seed=1,2,-3 --out " + (dir_ / "sw2").string(), true, kQuick);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_EQ(bad.err.rfind("dtsim: error: command line (--vary): run.seed: -3 is out of range", 0), 0u) << bad.err;
}

// A check that stays long (each combination of the varied values loads the data: 20 take 10 to 20 s here) says
// how far it got, every 5 s.
TEST_F(Hangs, ALongCheckShowsItsProgress) {
  std::string rates;
  for (int i = 1; i <= 20; ++i) rates += (rates.empty() ? "" : ",") + std::to_string(1000 + i) + "e-6";
  const DtsimOutcome o = run_dtsim("sweep " + base_ + " --vary training.lr=" + rates + " --out " +
                                       (dir_ / "sw").string() + " --slurm " + (dir_ / "s.sh").string(),
                                   true, 600);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.output.find("dtsim sweep: checking the runs before any starts: "), std::string::npos) << o.output;
  EXPECT_NE(o.output.find(" of 20 combinations checked\n"), std::string::npos) << o.output;
}

// The second of two runs into one --out is refused at once: the first claims the folder before it loads its
// data (it used to lock it once loaded, so that two runs started 0.3 s apart both ran, the later replacing the
// earlier).
TEST_F(Hangs, ASecondRunIntoTheSameOutIsRefusedBeforeTheFirstHasLoaded) {
  const fs::path out = dir_ / "out";
  // 400 epochs keep the first run busy for seconds after it has claimed the folder (one epoch ends in about one,
  // mostly loading: the second run, started on a loaded machine, once found the folder free again).
  BackgroundRun first({"run", base_, "--quiet", "--out", out.string(), "--set", "training.epochs=400"},
                      dir_ / "first.txt");
  const fs::path lock = out / ".dtsim-run.lock";
  ASSERT_TRUE(wait_until([&] { return file_text(lock).rfind("pid " + std::to_string(first.pid()), 0) == 0; }, 60));
  const DtsimOutcome second = run_dtsim("run " + base_ + " --quiet --out " + out.string(), true, kQuick);
  EXPECT_EQ(second.exit_code, 2) << second.err;
  // The holder in one readable phrase: "(pid 123, started 2026-12-07 10:00:00, scenario base.ini)".
  EXPECT_EQ(second.err.rfind("dtsim: error: command line: --out: '" + out.string() + "' is in use by another dtsim run (pid " +
                                 std::to_string(first.pid()) + ", started ",
                             0),
            0u)
      << second.err;
  EXPECT_NE(second.err.find(", scenario " + base_ + "); wait for that run to end"), std::string::npos) << second.err;
  EXPECT_EQ(first.wait(), 0);
  EXPECT_TRUE(fs::exists(out / "summary.json"));
}

// Bad input found once the folder is claimed leaves it as it was: a new folder is removed again, an old one
// keeps the previous run's files.
TEST_F(Hangs, BadInputFoundAfterTheFolderIsClaimedLeavesItAsItWas) {
  const fs::path out = dir_ / "out";
  EXPECT_EQ(run_dtsim("run " + base_ + " --out " + out.string() + " --set training.batch_per_worker=5000", true, kQuick).exit_code, 2);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(run_dtsim("run " + base_ + " --out " + (dir_ / "a/b/c").string() + " --set training.batch_per_worker=5000", true,
                      kQuick).exit_code,
            2);
  EXPECT_FALSE(fs::exists(dir_ / "a")) << "nor the parents it made";
  ASSERT_EQ(run_dtsim("run " + base_ + " --quiet --out " + out.string() + " --set training.max_steps=4", true, 300).exit_code, 0);
  const std::string summary = file_text(out / "summary.json");
  EXPECT_EQ(run_dtsim("run " + base_ + " --out " + out.string() + " --set training.batch_per_worker=5000", true, kQuick).exit_code, 2);
  EXPECT_EQ(file_text(out / "summary.json"), summary);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(out)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{".dtsim-run.lock", "links.csv", "metrics.csv", "summary.json"}));
}

}  // namespace
}  // namespace dtsim::testing
