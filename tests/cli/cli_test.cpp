// The dtsim executable as a user runs it: exit codes, one-line errors naming the key, outputs that survive
// bad input, determinism and the quickstart's accuracy.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli/run_dtsim.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kQuickstart = std::string(DTSIM_SOURCE_DIR) + "/scenarios/quickstart.ini";

using Outcome = dtsim::testing::DtsimOutcome;

Outcome dtsim(const std::string& args) { return dtsim::testing::run_dtsim(args); }

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dtsim_cli_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write_scenario(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }

  // A bad-input case: exit status 2, one line, naming `key`.
  void expect_bad_input(const std::string& args, const std::string& key) {
    const Outcome o = dtsim(args);
    EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.output;
    EXPECT_NE(o.output.find(key), std::string::npos) << args << "\n" << o.output;
    EXPECT_EQ(o.output.rfind("dtsim: error: ", 0), 0u) << o.output;
    EXPECT_EQ(std::count(o.output.begin(), o.output.end(), '\n'), 1) << "one line: " << o.output;
  }

  fs::path dir_;
};

TEST_F(Cli, UnknownKeyInTheFile) {
  const fs::path p = write_scenario("s.ini", "[cluster]\nworkers = 4\n[training]\nepocs = 2\n");
  expect_bad_input("check " + p.string(), "training.epocs");
  const Outcome o = dtsim("check " + p.string());
  EXPECT_NE(o.output.find("s.ini:4"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("did you mean 'training.epochs'"), std::string::npos) << o.output;
}

TEST_F(Cli, BadUnitOutOfRangeAndBadValues) {
  expect_bad_input("check " + kQuickstart + " --set fabric.bandwidth=200Gbs", "fabric.bandwidth");
  expect_bad_input("check " + kQuickstart + " --set training.lr=-1", "training.lr");
  expect_bad_input("check " + kQuickstart + " --set cluster.workers=0", "cluster.workers");
  expect_bad_input("check " + kQuickstart + " --set training.batch_per_worker=9000", "training.batch_per_worker");
  expect_bad_input("run " + kQuickstart + " --set training.nosuchkey=1", "training.nosuchkey");
}

TEST_F(Cli, MissingFiles) {
  expect_bad_input("check " + (dir_ / "absent.ini").string(), "absent.ini");
  expect_bad_input("check " + kQuickstart + " --set data.path=" + (dir_ / "no-data").string(), "data.path");
  expect_bad_input("check " + kQuickstart + " --set gpu.profile=no-such-gpu", "gpu.profile");
}

TEST_F(Cli, BadCommandLines) {
  expect_bad_input("run " + kQuickstart + " --bogus", "bogus");
  expect_bad_input("runn " + kQuickstart, "did you mean 'run'");
  expect_bad_input("run", "needs a scenario file");
  expect_bad_input("check " + kQuickstart + " extra-argument", "extra-argument");
  EXPECT_EQ(dtsim("").exit_code, 2);
  EXPECT_EQ(dtsim("--help").exit_code, 0);
  EXPECT_EQ(dtsim("--version").exit_code, 0);
}

// A hierarchical allreduce over nodes of different sizes: the collective says why, the sync strategy names
// the key, in the same words as when the collectives named it themselves.
TEST_F(Cli, CollectiveRefusalNamesTheKey) {
  const dtsim::testing::DtsimOutcome o = dtsim::testing::run_dtsim(
      "run " + kQuickstart + " --quiet --out " + (dir_ / "out").string() +
          " --set cluster.workers=6 --set \"cluster.groups=a:1:a100-40gb:4; b:1:a100-40gb:2\"" +
          " --set cluster.intra_node_fabric=nvlink4-nvswitch --set collective.algorithm=hierarchical",
      /*separate_stderr=*/true);
  EXPECT_EQ(o.exit_code, 2) << o.output << o.err;
  // (quickstart's gpu.profile is reported first: the groups bring their own GPUs.)
  EXPECT_EQ(o.err,
            "dtsim: warning: " + kQuickstart + ":21: gpu.profile: has no effect: every node belongs to a "
            "cluster.groups group, whose GPU comes from that group's profile alone\n"
            "dtsim: error: collective: collective.algorithm: hierarchical allreduce needs the same number of ranks on "
            "every node (found 4 and 2); use ring, tree or halving-doubling\n");
}

TEST_F(Cli, BadInputDestroysNoExistingOutput) {
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  std::ofstream(out / "metrics.csv") << "precious\n";
  std::ofstream(out / "summary.json") << "{\"precious\": true}\n";
  const Outcome o = dtsim("run " + kQuickstart + " --out " + out.string() + " --set training.lr=zero");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_EQ(read_file(out / "metrics.csv"), "precious\n");
  EXPECT_EQ(read_file(out / "summary.json"), "{\"precious\": true}\n");
}

// A new run's outputs replace the old run's, and what analysis/report.py wrote into the folder about the old
// run goes with them (it contradicted the new summary); other files stay.
TEST_F(Cli, ANewRunRemovesTheOldRunsReport) {
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  std::ofstream(out / "report.html") << "the old run's page\n";
  std::ofstream(out / "notes.txt") << "mine\n";
  const Outcome o = dtsim("run " + kQuickstart + " --quiet --out " + out.string() + " --set training.max_steps=2");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_FALSE(fs::exists(out / "report.html"));
  EXPECT_EQ(read_file(out / "notes.txt"), "mine\n");
  // The keys set on the command line, which with the scenario file reproduce the run.
  EXPECT_EQ(nlohmann::json::parse(read_file(out / "summary.json"))["sets"],
            nlohmann::json::array({"training.max_steps=2"}));
}

TEST_F(Cli, KeysListsEveryKeyWithTypeUnitAndDefault) {
  const Outcome o = dtsim("keys");
  EXPECT_EQ(o.exit_code, 0);
  for (const char* key : {"cluster.workers", "fabric.bandwidth", "training.lr", "gpu.peak_bf16", "eval.per_epoch"})
    EXPECT_NE(o.output.find(key), std::string::npos) << key;
  EXPECT_NE(o.output.find("bandwidth  B/s"), std::string::npos) << o.output;
}

TEST_F(Cli, KeysFormatTextIsTheDefault) {
  const Outcome plain = dtsim("keys");
  const Outcome text = dtsim("keys --format text");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_EQ(text.output, plain.output);
}

// The page docs/keys.md is made of: a generated-file notice, then one six-column table per section.
TEST_F(Cli, KeysFormatMarkdownIsOneTablePerSection) {
  const Outcome o = dtsim::testing::run_dtsim("keys --format markdown", /*separate_stderr=*/true);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(o.err.empty()) << o.err;
  EXPECT_EQ(o.output.rfind("# Scenario keys\n", 0), 0u) << o.output;
  EXPECT_NE(o.output.find("Generated by `dtsim keys --format markdown > docs/keys.md`; do not edit it by hand"),
            std::string::npos);
  for (const char* section : {"## [cluster]\n", "## [fabric]\n", "## [training]\n", "## [gpu]\n", "## [eval]\n"})
    EXPECT_NE(o.output.find(section), std::string::npos) << section;
  const std::string header = "| key | type | unit | default | range or choices | meaning |\n";
  size_t tables = 0, sections = 0;
  for (size_t at = o.output.find(header); at != std::string::npos; at = o.output.find(header, at + 1)) ++tables;
  for (size_t at = o.output.find("\n## ["); at != std::string::npos; at = o.output.find("\n## [", at + 1)) ++sections;
  EXPECT_GT(sections, 5u);
  EXPECT_EQ(tables, sections);
  EXPECT_NE(o.output.find("| `cluster.workers` | int |"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("| `fabric.bandwidth` | bandwidth | B/s |"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("| star, fat-tree, torus, dragonfly, two-sites |"), std::string::npos) << o.output;
  // A '|' inside a cell is escaped, so that every row still has exactly six cells.
  EXPECT_NE(o.output.find("mu/2 \\|y - x_global\\|^2"), std::string::npos) << o.output;
  std::istringstream lines(o.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("|", 0) != 0) continue;
    int bars = 0;
    for (size_t i = 0; i < line.size(); ++i)
      if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++bars;
    EXPECT_EQ(bars, 7) << line;
  }
}

TEST_F(Cli, KeysRejectsAnUnknownFormat) {
  expect_bad_input("keys --format xml", "--format");
  EXPECT_EQ(dtsim("keys --format xml").output,
            "dtsim: error: command line: --format: unknown format 'xml'; use text or markdown\n");
}

// A flag the command does not read is refused, naming it, rather than ignored (check --out wrote nothing,
// profiles --set did not even parse its value, keys ignored a stray argument).
TEST_F(Cli, FlagsACommandDoesNotReadAreRefused) {
  expect_bad_input("check " + kQuickstart + " --out " + (dir_ / "x").string(), "--out: does not apply to 'dtsim check'");
  expect_bad_input("run " + kQuickstart + " --format markdown --out " + (dir_ / "x").string(),
                   "--format: does not apply to 'dtsim run'; it takes --out, --quiet, --set and --strict");
  expect_bad_input("keys --set training.lr=1", "--set: does not apply to 'dtsim keys'; it takes --format");
  expect_bad_input("keys --out x", "--out: does not apply to 'dtsim keys'");
  expect_bad_input("profiles --strict", "--strict: does not apply to 'dtsim profiles'; drop it");
  expect_bad_input("profiles --set training.lr=abc", "--set: does not apply to 'dtsim profiles'");
  expect_bad_input("keys extra", "unexpected argument 'extra'; 'dtsim keys' takes no file");
  expect_bad_input("run " + kQuickstart + " --out ''", "--out: is empty");
  expect_bad_input("profiles ''", "an empty folder name");

  EXPECT_FALSE(fs::exists(dir_ / "x"));
}

// A flag left without its value takes the next flag as its value ("--ranks --format csv" gave --ranks the value
// "--format" and blamed the stray 'csv'): the message names the flag that lacks its value, in every command.
TEST_F(Cli, AFlagWithoutItsValueIsNamed) {
  expect_bad_input("collective --ranks --format csv",
                   "--ranks: has no value: the next word is the flag '--format'; give --ranks its value");
  expect_bad_input("run " + kQuickstart + " --out --quiet", "--out: has no value: the next word is the flag '--quiet'");
  expect_bad_input("run " + kQuickstart + " --set --strict", "--set: has no value");
  expect_bad_input("sweep " + kQuickstart + " --vary --seeds 2", "--vary: has no value: the next word is the flag '--seeds'");
  expect_bad_input("workload --gpus --layers", "--gpus: has no value");
  EXPECT_FALSE(fs::exists(fs::path("--quiet")));
}

// A compressor that would never compress is refused at the key that keeps it off: every tensor below
// min_tensor_size, or a start after the run's last gradient step (sync, or local SGD's synchronous start).
TEST_F(Cli, ACompressorThatWouldNeverCompressIsRefused) {
  const std::string topk = std::string(DTSIM_SOURCE_DIR) + "/scenarios/topk_error_feedback.ini --set training.max_steps=8";
  EXPECT_EQ(dtsim("check " + topk + " --quiet").exit_code, 0);
  expect_bad_input("check " + topk + " --set compression.min_tensor_size=1000000",
                   "compression.min_tensor_size: every tensor of the model is smaller (the largest holds 200704 values)");
  EXPECT_EQ(dtsim("check " + topk + " --quiet --set compression.min_tensor_size=200704").exit_code, 0);
  expect_bad_input("check " + topk + " --set compression.start_step=8",
                   "compression.start_step: the run averages gradients in its first 8 steps only");
  EXPECT_EQ(dtsim("check " + topk + " --quiet --set compression.start_step=7").exit_code, 0);
  expect_bad_input("check " + topk + " --set training.strategy=local --set local.local_steps=4 "
                   "--set local.sync_until_step=4 --set compression.start_step=4",
                   "compression.start_step: the run averages gradients in its first 4 steps only");
  // Federated learning counts the start in rounds.
  const std::string fl = std::string(DTSIM_SOURCE_DIR) + "/scenarios/fedprox_synthetic.ini --set fl.rounds=3 "
                         "--set compression.kind=topk";
  expect_bad_input("check " + fl + " --set compression.start_step=3",
                   "compression.start_step: the run has 3 rounds, so compression (from round 3, counting from 0)");
  expect_bad_input("check " + fl + " --set compression.start_epoch=3", "compression.start_epoch: the run has 3 rounds");
  EXPECT_EQ(dtsim("check " + fl + " --quiet --set compression.start_step=2").exit_code, 0);
  // Signum's own momentum and the optimizer's would be two.
  expect_bad_input("check " + kQuickstart + " --set compression.kind=signum",
                   "compression.kind: signum keeps each worker's momentum");
  EXPECT_EQ(dtsim("check " + kQuickstart + " --quiet --set compression.kind=signum --set training.momentum=0").exit_code, 0);
}

// Cosine decay spans the steps a run takes: a run that ends within its warmup is refused at the key that made
// it that short (the step cap) or the warmup that long, not at training.decay.
TEST_F(Cli, AWarmupAsLongAsTheRunIsRefusedAtTheKeyThatMadeItSo) {
  const fs::path p = write_scenario("cosine.ini", "[data]\ndataset = synthetic\n[model]\narch = logreg\n[training]\n"
                                                  "decay = cosine\nwarmup_steps = 30\n");  // 33 steps an epoch
  EXPECT_EQ(dtsim("check " + p.string() + " --quiet").exit_code, 0);
  expect_bad_input("check " + p.string() + " --set training.max_steps=20",
                   "training.max_steps: the run's 20 steps end within its warmup of 30, leaving cosine decay");
  expect_bad_input("check " + p.string() + " --set training.warmup_steps=200",  // 3 epochs by default: 99 steps
                   "training.warmup_steps: the run's 99 steps end within its warmup of 200");
}

// With cluster.groups every node's GPU is its group's: the setup line names those, not the [gpu] profile.
TEST_F(Cli, TheSetupLineNamesTheGroupsGpus) {
  const Outcome o = dtsim("check " + std::string(DTSIM_SOURCE_DIR) + "/scenarios/mixed_cluster.ini --set "
                          "'cluster.groups=v100:4:v100-32gb; h:4:h100-80gb'");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("v100: 4 × Tesla-V100-SXM2-32GB (fp32 15.7 TFLOPS × 0.48) + h: 4 × H100-SXM5-80GB"),
            std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("A100"), std::string::npos) << o.output;
}

// The [gpu] section is on no node under cluster.groups: its memory does not refuse a transformer the groups'
// GPUs hold (it did: "the A100-SXM4-40GB has 1 MB"), and it may be left without values.
TEST_F(Cli, NodeGroupsIgnoreTheGpuSectionsValues) {
  const std::string qa = std::string(DTSIM_SOURCE_DIR) + "/scenarios/qa_lora.ini";
  const Outcome o = dtsim("check " + qa + " --set 'cluster.groups=a:2:h100-80gb; b:2:a100-80gb' --set gpu.memory=1MB");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("gpu.memory: has no effect"), std::string::npos) << o.output;
  const Outcome small = dtsim("check " + qa + " --set 'cluster.groups=a:2:h100-80gb; b:2:a100-80gb' "
                              "--set training.batch_per_worker=1024 --set transformer.dim=2048 --set transformer.ffn=8192 "
                              "--set transformer.layers=16");
  EXPECT_EQ(small.exit_code, 2) << small.output;
  EXPECT_NE(small.output.find("cluster.groups"), std::string::npos) << "a group's own GPU still refuses it: " << small.output;
  const Outcome empty = dtsim("check " + std::string(DTSIM_SOURCE_DIR) + "/scenarios/mixed_cluster.ini --set gpu.profile=");
  EXPECT_EQ(empty.exit_code, 0) << empty.output;
}

TEST_F(Cli, CheckAcceptsTheQuickstart) {
  const Outcome o = dtsim("check " + kQuickstart);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("ok"), std::string::npos);
}

// The quickstart, twice: byte-identical metrics, every documented output, and the accuracy it promises.
TEST_F(Cli, QuickstartIsDeterministicAndReachesEightyFivePercent) {
  const fs::path a = dir_ / "a", b = dir_ / "b";
  const Outcome ra = dtsim("run " + kQuickstart + " --quiet --out " + a.string());
  const Outcome rb = dtsim("run " + kQuickstart + " --quiet --out " + b.string());
  ASSERT_EQ(ra.exit_code, 0) << ra.output;
  ASSERT_EQ(rb.exit_code, 0) << rb.output;
  EXPECT_TRUE(ra.output.empty()) << "--quiet prints nothing: " << ra.output;
  const std::string metrics = read_file(a / "metrics.csv");
  EXPECT_EQ(metrics, read_file(b / "metrics.csv"));
  EXPECT_EQ(metrics.substr(0, metrics.find('\n')),
            "step,epoch,sim_time_s,lr,train_loss,test_loss,test_accuracy,bytes_sent,compression_error,"
            "wire_bytes_per_worker,compression_ratio,staleness_mean,staleness_max,nonfinite");
  const std::string last_row = metrics.substr(metrics.rfind('\n', metrics.size() - 2) + 1);
  EXPECT_EQ(last_row.substr(last_row.size() - 4), ",,,\n")
      << "an uncompressed run leaves the compression cells empty, and nothing is flagged non-finite";

  const nlohmann::json s = nlohmann::json::parse(read_file(a / "summary.json"));
  for (const char* key : {"status", "final_test_accuracy", "best_test_accuracy", "simulated_time_s", "wall_time_s",
                          "time_breakdown_s", "bytes_sent", "seed", "dtsim_version", "scenario"})
    EXPECT_TRUE(s.contains(key)) << key;
  EXPECT_EQ(s["status"], "completed");
  EXPECT_GE(s["final_test_accuracy"].get<double>(), 0.85);
  EXPECT_GE(s["best_test_accuracy"].get<double>(), s["final_test_accuracy"].get<double>());
  const auto& t = s["time_breakdown_s"];
  const double busy = t["compute"].get<double>() + t["communication"].get<double>() + t["idle"].get<double>();
  EXPECT_NEAR(busy, s["simulated_time_s"].get<double>(), 1e-6 * busy);
  EXPECT_EQ(s["scenario"]["cluster"]["workers"], 8);
  EXPECT_EQ(s["scenario"]["training"]["batch_per_worker"], 32);
  EXPECT_EQ(s["seed"], 1);
}

// NIID-Bench's feature imbalance end to end: the run completes, its summary says so, and it tests on one
// noisy copy of the test set per worker; settings where it cannot act are refused or reported.
TEST_F(Cli, FeatureNoiseTestsOnEveryWorkersNoisyCopy) {
  const std::string small = " --set cluster.workers=4 --set training.max_steps=4 --set data.train_samples=2000"
                            " --set data.test_samples=300";
  const Outcome run = dtsim("run " + kQuickstart + small + " --set data.feature_noise=0.2 --quiet --out " +
                            (dir_ / "noisy").string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json s = nlohmann::json::parse(read_file(dir_ / "noisy" / "summary.json"));
  EXPECT_EQ(s["status"], "completed");
  EXPECT_EQ(s["dataset"]["test_samples"], 4 * 300);
  EXPECT_DOUBLE_EQ(s["dataset"]["feature_noise"].get<double>(), 0.2);
  ASSERT_EQ(dtsim("run " + kQuickstart + small + " --quiet --out " + (dir_ / "clean").string()).exit_code, 0);
  const nlohmann::json clean = nlohmann::json::parse(read_file(dir_ / "clean" / "summary.json"));
  EXPECT_FALSE(clean["dataset"].contains("feature_noise"));
  EXPECT_NE(clean["final_test_loss"], s["final_test_loss"]) << "the noise reaches the training batches";

  expect_bad_input("check " + kQuickstart + " --set data.feature_noise=-0.1", "data.feature_noise");
  expect_bad_input("check " + kQuickstart + " --set data.feature_noise=0.1 --set cluster.workers=16",
                   "data.feature_noise");
  // (Without --strict: with one worker the scenario's own [fabric] keys have no effect either, and --strict
  // names the first of them.)
  const Outcome one = dtsim("check " + kQuickstart + " --set cluster.workers=1 --set data.feature_noise=0.1");
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("data.feature_noise: has no effect with one worker"), std::string::npos) << one.output;
}

// model.init reaches the network: the run starts from other weights, and its summary says which scheme.
TEST_F(Cli, InitSchemeReachesTheRunAndItsSummary) {
  const std::string small = " --set cluster.workers=2 --set training.max_steps=3 --set data.train_samples=1000"
                            " --set data.test_samples=300 --quiet --out ";
  ASSERT_EQ(dtsim("run " + kQuickstart + small + (dir_ / "he").string()).exit_code, 0);
  const Outcome torch = dtsim("run " + kQuickstart + " --set model.init=torch-default" + small + (dir_ / "torch").string());
  ASSERT_EQ(torch.exit_code, 0) << torch.output;
  const nlohmann::json he = nlohmann::json::parse(read_file(dir_ / "he" / "summary.json"));
  const nlohmann::json t = nlohmann::json::parse(read_file(dir_ / "torch" / "summary.json"));
  EXPECT_EQ(he["model"]["init"], "he-uniform");
  EXPECT_EQ(t["model"]["init"], "torch-default");
  EXPECT_EQ(t["status"], "completed");
  EXPECT_NE(he["final_test_loss"], t["final_test_loss"]) << "the scheme changes the starting weights";
  expect_bad_input("check " + kQuickstart + " --set model.init=xavier", "model.init");
}

}  // namespace

namespace {

TEST(MemoryFit, AJobThatDoesNotFitTheGpuIsRefusedWithTheBatchThatWould) {
  // The quickstart's MLP in fp32 with SGD momentum: weights, gradients and momentum are 12 bytes for each of
  // its 235,146 weights; each sample keeps every layer's input (784 + 256 + 256 + 128 + 128 values) and the
  // loss keeps its 10 logits, 4 bytes each.
  const double state = 235146.0 * 12, per_sample = (784 + 256 + 256 + 128 + 128 + 10) * 4.0;
  const double memory = 3e6;  // 3 MB: the state fits, 32 samples do not
  const long long fitting = static_cast<long long>((memory - state) / per_sample);
  ASSERT_EQ(fitting, 28);
  const Outcome refused = dtsim("check " + kQuickstart + " --set gpu.memory=3MB");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.output.find("gpu.memory: the job needs"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("lower training.batch_per_worker to 28 or less"), std::string::npos) << refused.output;
  EXPECT_EQ(dtsim("check " + kQuickstart + " --quiet --set gpu.memory=3MB --set training.batch_per_worker=28").exit_code, 0);
  EXPECT_EQ(dtsim("check " + kQuickstart + " --quiet --set gpu.memory=3MB --set training.batch_per_worker=29").exit_code, 2);
  // Below the model state no batch helps.
  const Outcome hopeless = dtsim("check " + kQuickstart + " --set gpu.memory=2MB");
  EXPECT_EQ(hopeless.exit_code, 2);
  EXPECT_NE(hopeless.output.find("use a GPU with more memory or a smaller model"), std::string::npos) << hopeless.output;
}

}  // namespace
