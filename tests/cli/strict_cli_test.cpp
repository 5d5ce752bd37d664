// Keys that have no effect, through the executable: a warning line each on stderr, summary.json's
// ignored_keys, and --strict making the first of them an input error (exit 2) that writes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_dtsim.hpp"

namespace dtsim::testing {
namespace {

namespace fs = std::filesystem;

struct Folder {
  fs::path path = fs::temp_directory_path() / ("dtsim_strict_" + std::to_string(::getpid()));
  Folder() { fs::create_directories(path); }
  ~Folder() { fs::remove_all(path); }
};

// A tiny synchronous run that sets one [ps] key (line 9) it does not read.
std::string write_scenario(const fs::path& dir) {
  const fs::path file = dir / "tiny.ini";
  std::ofstream(file) << "[data]\ndataset = synthetic\n[model]\narch = logreg\n[training]\nstrategy = sync\n"
                         "max_steps = 2\n[ps]\nservers = 2\n";
  return file.string();
}

TEST(StrictCli, KeysWithoutEffectAreWarnedAboutAndListedInTheSummary) {
  Folder f;
  const std::string scenario = write_scenario(f.path);
  const DtsimOutcome o = run_dtsim("run " + scenario + " --quiet --out " + (f.path / "out").string(), true);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "dtsim: warning: " + scenario +
                       ":9: ps.servers: has no effect with training.strategy = sync (only async-ps reads [ps])\n");
  std::ifstream in(f.path / "out" / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(in);
  ASSERT_EQ(summary["ignored_keys"].size(), 1u);
  EXPECT_EQ(summary["ignored_keys"][0]["key"], "ps.servers");
  EXPECT_EQ(summary["ignored_keys"][0]["where"], scenario + ":9");
}

TEST(StrictCli, StrictMakesThemInputErrorsAndWritesNothing) {
  Folder f;
  const std::string scenario = write_scenario(f.path);
  const fs::path out = f.path / "out";
  const DtsimOutcome run = run_dtsim("run " + scenario + " --strict --out " + out.string(), true);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "dtsim: error: " + scenario +
                         ":9: ps.servers: has no effect with training.strategy = sync (only async-ps reads [ps]); "
                         "remove it, or run without --strict\n");
  EXPECT_FALSE(fs::exists(out));
  const DtsimOutcome check = run_dtsim("check " + scenario + " --strict --set ps.staleness_bound=2", true);
  EXPECT_EQ(check.exit_code, 2);
  EXPECT_NE(check.err.find("(and 1 more such keys)"), std::string::npos) << check.err;
  // Without the stray key, --strict passes.
  EXPECT_EQ(run_dtsim("check " + scenario + " --strict --set training.strategy=async-ps --quiet").exit_code, 0);
}

TEST(StrictCli, RooflineKeysAreReadByRuns) {
  // A run charges each layer with the per-layer roofline, so the memory bandwidth and the launch overhead
  // are read like any other GPU key, under every strategy.
  Folder f;
  const std::string scenario = (f.path / "plain.ini").string();
  // (No step count: federated runs count rounds, and would report it.)
  std::ofstream(scenario) << "[data]\ndataset = synthetic\n[model]\narch = logreg\n";
  for (const char* strategy : {"sync", "async-ps", "federated"}) {
    const DtsimOutcome set = run_dtsim("check " + scenario + " --strict --quiet --set training.strategy=" + strategy +
                                           " --set gpu.launch_overhead=10us --set gpu.memory_bandwidth=2TB/s",
                                       true);
    EXPECT_EQ(set.exit_code, 0) << strategy << ": " << set.err;
  }
}

TEST(StrictCli, KeysThatLaterChecksReadAreWarnedAboutNotRefused) {
  // A cosine floor without cosine decay, and a proxy without a workload, are keys without effect like any
  // other: a warning, not an error blamed on a key the user did not set.
  Folder f;
  const std::string scenario = write_scenario(f.path);
  const DtsimOutcome o = run_dtsim("check " + scenario + " --quiet --set training.strategy=async-ps "
                                   "--set training.min_lr=0.01 --set workload.proxy=true", true);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("dtsim: warning: command line (--set): training.min_lr: has no effect with training.decay = "
                       "constant (it applies to cosine)\n"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("dtsim: warning: command line (--set): workload.proxy: has no effect without workload.name\n"),
            std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("error"), std::string::npos) << o.err;
}

TEST(StrictCli, OverlapWithOneBucketIsReported) {
  // Logistic regression on the synthetic data: 61 × 10 parameters, 2,440 bytes of fp32 gradients.
  Folder f;
  const std::string scenario = (f.path / "one_bucket.ini").string();
  std::ofstream(scenario) << "[data]\ndataset = synthetic\n[model]\narch = logreg\n[sync]\noverlap = false\n";
  const DtsimOutcome one = run_dtsim("check " + scenario + " --quiet", true);
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.err, "dtsim: warning: " + scenario + ":6: sync.overlap: has no effect: the model's gradients (2.44 kB) "
                     "fit one bucket of sync.bucket_size (25 MB), which leaves when backward ends\n");
  // Buckets smaller than the gradients: several, and overlap decides when each leaves.
  EXPECT_EQ(run_dtsim("check " + scenario + " --quiet --set sync.bucket_size=1kB", true).err, "");
}

TEST(StrictCli, ABucketSizeThatStillGivesOneBucketIsReported) {
  // 2,440 bytes of gradients fit one bucket of the default 25 MB and of any size from 2.44 kB up.
  Folder f;
  const std::string scenario = (f.path / "buckets.ini").string();
  std::ofstream(scenario) << "[data]\ndataset = synthetic\n[model]\narch = logreg\n[sync]\nbucket_size = 1MB\n";
  const DtsimOutcome one = run_dtsim("check " + scenario + " --quiet", true);
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.err, "dtsim: warning: " + scenario + ":6: sync.bucket_size: has no effect: the model's gradients "
                     "(2.44 kB) fit one bucket of this size, as they fit one of the default 25 MB; a size under "
                     "2.44 kB would split them\n");
  EXPECT_EQ(run_dtsim("check " + scenario + " --quiet --strict", true).exit_code, 2);
  // Under the gradients' size the buckets are several: the key acts.
  EXPECT_EQ(run_dtsim("check " + scenario + " --quiet --set sync.bucket_size=1kB", true).err, "");
}

TEST(StrictCli, AWarmupOfNoStepOrOnePeakStepIsReported) {
  // The generated data's 8,448 training samples in global batches of 256: 33 steps per epoch.
  Folder f;
  const std::string scenario = (f.path / "warmup.ini").string();
  std::ofstream(scenario) << "[data]\ndataset = synthetic\n[model]\narch = logreg\n";
  const std::string base = "check " + scenario + " --quiet";
  // 0.01 epoch is a third of a step: it rounds to none, and the start rate it would have begun at is moot too.
  const DtsimOutcome none = run_dtsim(base + " --set training.warmup_epochs=0.01 --set training.warmup_start_lr=0.001", true);
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.err,
            "dtsim: warning: command line (--set): training.warmup_epochs: has no effect: it rounds to no warmup step "
            "(33 steps per epoch)\n"
            "dtsim: warning: command line (--set): training.warmup_start_lr: has no effect: training.warmup_epochs "
            "rounds to no warmup step (33 steps per epoch)\n");
  // One step from the peak (lr · (0 + 1)/1) before a constant rate is no warmup at all, counted in steps or
  // rounded from epochs (0.03 · 33 = 0.99) ...
  EXPECT_EQ(run_dtsim(base + " --set training.warmup_steps=1", true).err,
            "dtsim: warning: command line (--set): training.warmup_steps: has no effect: its one warmup step runs at "
            "the peak rate, as without a warmup\n");
  EXPECT_EQ(run_dtsim(base + " --set training.warmup_epochs=0.03", true).err,
            "dtsim: warning: command line (--set): training.warmup_epochs: has no effect: it rounds to one warmup "
            "step (33 steps per epoch), which runs at the peak rate, as without a warmup\n");
  // ... but a step from a start rate, one that shifts a decay, or three steps (0.1 epoch) act.
  EXPECT_EQ(run_dtsim(base + " --set training.warmup_steps=1 --set training.warmup_start_lr=0.001", true).err, "");
  EXPECT_EQ(run_dtsim(base + " --set training.warmup_steps=1 --set training.decay=cosine", true).err, "");
  EXPECT_EQ(run_dtsim(base + " --set training.warmup_epochs=0.1", true).err, "");
}

// A failure planned after the run's last step never happens; known only once the run has ended, it is
// reported then, on stderr and in summary.json. Background traffic planned after the end too.
TEST(StrictCli, AFailurePlannedAfterTheRunsEndIsReported) {
  Folder f;
  const std::string scenario = (f.path / "late.ini").string();
  std::ofstream(scenario) << "[data]\ndataset = synthetic\n[model]\narch = logreg\n[training]\nmax_steps = 2\n"
                             "[faults]\nevents = worker 1 down at 10s\n";
  const DtsimOutcome o = run_dtsim("run " + scenario + " --quiet --out " + (f.path / "out").string(), true);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err.rfind("dtsim: warning: " + scenario + ":8: faults.events: has no effect: 'worker 1 down at 10 s' "
                        "comes after the run ended at ", 0), 0u) << o.err;
  std::ifstream in(f.path / "out" / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(in);
  ASSERT_EQ(summary["ignored_keys"].size(), 1u);
  EXPECT_EQ(summary["ignored_keys"][0]["key"], "faults.events");
  EXPECT_EQ(summary["status"], "completed");
  // One within the run happens, and is not reported.
  const DtsimOutcome early = run_dtsim("run " + scenario + " --quiet --set 'faults.events=worker 1 down at 1us' --out " +
                                       (f.path / "early").string(), true);
  EXPECT_EQ(early.exit_code, 0) << early.err;
  EXPECT_EQ(early.err.find("faults.events"), std::string::npos) << early.err;


  const DtsimOutcome background = run_dtsim(
      "run " + scenario + " --quiet --set 'faults.events=' --set 'background.flows=worker0 -> worker1 from 10s' "
      "--set 'background.link_profile=1: 0s 50%, 20s 100%' --out " + (f.path / "background").string(), true);
  EXPECT_EQ(background.exit_code, 0) << background.err;
  EXPECT_NE(background.err.find("background.flows: has no effect: the flow from worker 0 to worker 1 starts at 10 s, "
                                "after the run ended at "), std::string::npos) << background.err;
  EXPECT_NE(background.err.find("background.link_profile: has no effect: its point at 20 s comes after the run "
                                "ended at "), std::string::npos) << background.err;
  EXPECT_EQ(background.err.find("point at 0 s"), std::string::npos) << background.err;
}

// --strict refuses before anything runs, or not at all: a failure found after the run's end is a warning under
// --strict too, at every command that runs or checks the scenario, so that `dtsim check --strict` and
// `dtsim run --strict` agree (run --strict used to exit 2 after it had replaced the folder's earlier run).
TEST(StrictCli, ALateFailureIsAWarningUnderStrictAtEveryEntryPoint) {
  Folder f;
  const std::string scenario = (f.path / "late.ini").string();
  std::ofstream(scenario) << "[data]\ndataset = synthetic\n[model]\narch = logreg\n[training]\nmax_steps = 2\n";
  const std::string late = " --set 'faults.events=worker 1 down at 10s'";
  const fs::path old = f.path / "old";
  ASSERT_EQ(run_dtsim("run " + scenario + " --quiet --out " + old.string(), true).exit_code, 0);

  const DtsimOutcome check = run_dtsim("check " + scenario + " --quiet --strict" + late, true, 120);
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(check.err, "");

  const DtsimOutcome run = run_dtsim("run " + scenario + " --quiet --strict --out " + old.string() + late, true, 120);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err.rfind("dtsim: warning: command line (--set): faults.events: has no effect: 'worker 1 down at 10 s' "
                          "comes after the run ended at ",
                          0),
            0u)
      << run.err;
  EXPECT_NE(run.err.find(" (found once the run ended, so --strict could not refuse it)\n"), std::string::npos) << run.err;
  std::ifstream in(old / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(in);
  EXPECT_EQ(summary["status"], "completed");
  EXPECT_EQ(summary["ignored_keys"][0]["key"], "faults.events");

  // A sweep checks as dtsim check does, and its runs run as dtsim run does: locally, and as a Slurm task.
  const std::string sweep = "sweep " + scenario + " --quiet --strict --seeds 2 --jobs 1" + late + " --out ";
  const DtsimOutcome local = run_dtsim(sweep + (f.path / "sweep").string(), true, 600);
  EXPECT_EQ(local.exit_code, 0) << local.err;
  const DtsimOutcome slurm =
      run_dtsim(sweep + (f.path / "slurm").string() + " --slurm " + (f.path / "slurm.sh").string(), true, 600);
  EXPECT_EQ(slurm.exit_code, 0) << slurm.err;
  const DtsimOutcome task = run_dtsim(sweep + (f.path / "slurm").string() + " --task 1", true, 600);
  EXPECT_EQ(task.exit_code, 0) << task.err;
  for (const fs::path& run_folder : {f.path / "sweep" / "run.seed=1", f.path / "slurm" / "run.seed=2"}) {
    std::ifstream s(run_folder / "summary.json");
    ASSERT_TRUE(s) << run_folder;
    EXPECT_EQ(nlohmann::json::parse(s)["status"], "completed") << run_folder;
  }
}

TEST(StrictCli, AStepCapPastTheLastEpochIsReported) {
  // Known only once the data fixes the steps per epoch; a cap inside the run (the file's 2 steps) is not.
  Folder f;
  const std::string scenario = write_scenario(f.path);
  const std::string base = "check " + scenario + " --quiet --set ps.servers=1 --set training.strategy=async-ps";
  EXPECT_EQ(run_dtsim(base, true).err, "");
  const DtsimOutcome past = run_dtsim(base + " --set training.max_steps=100000000", true);
  EXPECT_EQ(past.exit_code, 0) << past.err;
  EXPECT_NE(past.err.find("command line (--set): training.max_steps: has no effect: the run's 3 epochs end at step "),
            std::string::npos) << past.err;
  EXPECT_NE(past.err.find(", no later than training.max_steps = 100000000\n"), std::string::npos) << past.err;
}

}  // namespace
}  // namespace dtsim::testing
