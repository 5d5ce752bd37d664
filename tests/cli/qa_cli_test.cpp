// The transformer on the QA task through the executable: only the adapters travel under LoRA (bytes against the
// ring's closed form), local SGD cuts the traffic by H, a saved base is fine-tuned, and summary.json reports exact
// match and F1 per domain.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_dtsim.hpp"

namespace {

namespace fs = std::filesystem;

// A transformer small enough to train a few steps in a second: 1 block of width 16, 2 heads, MLP 32.
const std::string kTiny =
    "--set model.arch=transformer --set data.dataset=qa --set data.train_samples=256 --set data.test_samples=64 "
    "--set transformer.dim=16 --set transformer.heads=2 --set transformer.layers=1 --set transformer.ffn=32 "
    "--set cluster.workers=2 --set training.batch_per_worker=8 --set training.optimizer=adam --set training.lr=0.001 "
    "--set eval.per_epoch=1 ";

const std::string kRun = "run " + std::string(DTSIM_SOURCE_DIR) + "/scenarios/qa_pretrain.ini --quiet --out ";

class QaCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dtsim_qa_cli_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  nlohmann::json run(const std::string& name, const std::string& sets) {
    const fs::path out = dir_ / name;
    const auto o = dtsim::testing::run_dtsim(kRun + out.string() + " " + kTiny + sets);
    EXPECT_EQ(o.exit_code, 0) << o.output;
    return nlohmann::json::parse(std::ifstream(out / "summary.json"));
  }
  fs::path dir_;
};

TEST_F(QaCli, OnlyTheAdaptersTravel) {
  const nlohmann::json s = run("lora", "--set lora.rank=2 --set training.max_steps=3");
  // q and v adapters of one block: 2 × (16·2 + 2·16).
  const double adapters = 2 * (16 * 2 + 2 * 16);
  EXPECT_EQ(s["model"]["parameters"].get<double>(), adapters);
  EXPECT_EQ(s["qa"]["trained_parameters"].get<double>(), adapters);
  EXPECT_LT(adapters / s["qa"]["base_parameters"].get<double>(), 0.05);
  // Each step's ring allreduce of 2 workers sends the fp32 gradient once each way: 2·(n − 1)·4 bytes per value.
  EXPECT_EQ(s["steps"].get<double>(), 3);
  EXPECT_EQ(s["bytes_sent"].get<double>(), 3 * 2 * (2 - 1) * 4 * adapters);
  // The accuracy is the exact match; F1 is at least as high; both domains are scored.
  const nlohmann::json& q = s["qa"];
  EXPECT_DOUBLE_EQ(s["final_test_accuracy"].get<double>(), q["test"]["exact_match"].get<double>());
  EXPECT_GE(q["test"]["f1"].get<double>(), q["test"]["exact_match"].get<double>());
  EXPECT_EQ(q["medical"]["examples"].get<int>() + q["finance"]["examples"].get<int>(), 64);
  EXPECT_GT(q["medical"]["examples"].get<int>(), 0);
  EXPECT_GT(q["finance"]["examples"].get<int>(), 0);
}

TEST_F(QaCli, LocalStepsCutTheTrafficByH) {
  const nlohmann::json every = run("sync", "--set lora.rank=2 --set training.max_steps=4");
  const nlohmann::json local =
      run("local", "--set lora.rank=2 --set training.max_steps=4 --set training.strategy=local "
                   "--set local.local_steps=2");
  EXPECT_EQ(every["bytes_sent"].get<double>(), 2 * local["bytes_sent"].get<double>());
}

TEST_F(QaCli, ASavedBaseIsFineTunedAndCanBeStoredInFourBits) {
  run("base", "--set training.max_steps=2 --set output.save_model=true");
  const fs::path base = dir_ / "base" / "model.bin";
  ASSERT_TRUE(fs::exists(base));
  const nlohmann::json plain = run("plain", "--set training.max_steps=2");
  EXPECT_EQ(static_cast<double>(fs::file_size(base)), 4 * plain["model"]["parameters"].get<double>());
  const std::string from = "--set lora.rank=2 --set training.max_steps=2 --set transformer.base=" + base.string();
  const nlohmann::json fp32 = run("fp32", from);
  const nlohmann::json nf4 = run("nf4", from + " --set lora.base_format=nf4");
  EXPECT_EQ(nf4["qa"]["base_format"], "nf4");
  EXPECT_EQ(fp32["qa"]["base_bytes"].get<double>(), fp32["qa"]["base_bytes_fp32"].get<double>());
  // Only the projection weights are quantised: per block four 16×16 attention weights (4 blocks of 64 values
  // each) and two 16×32 MLP weights (8 blocks), 2,048 values in 32 blocks: 1,024 bytes of codes and 32 scales
  // instead of 8,192 bytes.
  EXPECT_EQ(fp32["qa"]["base_bytes"].get<double>() - nf4["qa"]["base_bytes"].get<double>(), 8192 - (1024 + 4 * 32));
  // A base of another shape is refused before anything runs, naming the key.
  std::string wider = kTiny;  // the tiny model at twice its width (a key is set once on the command line)
  wider.replace(wider.find("transformer.dim=16"), 18, "transformer.dim=32");
  wider.replace(wider.find("transformer.ffn=32"), 18, "transformer.ffn=64");
  const auto wrong = dtsim::testing::run_dtsim(kRun + (dir_ / "wrong").string() + " " + wider + from);
  EXPECT_EQ(wrong.exit_code, 2) << wrong.output;
  EXPECT_NE(wrong.output.find("transformer.base"), std::string::npos) << wrong.output;
  EXPECT_FALSE(fs::exists(dir_ / "wrong" / "summary.json"));
}

}  // namespace
