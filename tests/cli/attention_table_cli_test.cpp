// gpu.attention_table from the command line: under compute.matmul = tiles a FlashAttention workload's step moves by
// exactly what the table's rates say against the FLOPs at the achievable rate; a bad or missing table is refused
// with its file and line; under the roofline the key is reported as without effect.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_dtsim.hpp"
#include "tests/cli/scratch_folder.hpp"

namespace {

namespace fs = std::filesystem;
using dtsim::testing::file_text;
using dtsim::testing::run_dtsim;
using dtsim::testing::run_summary;
using AttentionTable = dtsim::testing::ScratchFolder;

const std::string kSource = std::string(DTSIM_SOURCE_DIR);
const std::string kScenarios = kSource + "/scenarios/";


// LLaMA-7B with LoRA on one H100, 4 sequences per micro-batch, activation checkpointing, products from their shapes.
const std::string kOneH100 = "run " + kScenarios + "workload_llama_7b_lora.ini --quiet --set cluster.workers=1 "
                             "--set cluster.gpus_per_node=1 --set cluster.topology=star --set workload.steps=2 "
                             "--set gpu.profile=h100-80gb --set compute.matmul=tiles --out ";

TEST_F(AttentionTable, AFlashAttentionStepMovesByWhatTheTableSays) {
  const auto with_table = run_dtsim(kOneH100 + (dir_ / "table").string(), true);
  ASSERT_EQ(with_table.exit_code, 0) << with_table.err;
  const auto without = run_dtsim(kOneH100 + (dir_ / "none").string() + " --set gpu.attention_table=", true);
  ASSERT_EQ(without.exit_code, 0) << without.err;

  // Per sequence and layer the causal kernel counts F = 4 · 2048² · 32 heads · 128 / 2 FLOPs forward. With the
  // table (causal, width 128, 2k; 4 × 32 × 16 = 2,048 query blocks, the benchmark's, so no wave correction):
  // forward F / 298 TFLOP/s, backward whatever forward + backward at 265 leaves, 3.5 F / 265 − F / 298, and the
  // recomputed forward F / 298 again. Without it the layer's own FLOPs (2F forward, 5F backward, 2F recomputed)
  // run at 794.5 TFLOP/s. 32 layers, 4 sequences.
  const double F = 4.0 * 2048 * 2048 * 32 * 128 / 2;
  const double expected = 32 * 4 * F * (3.5 / 265e12 + 1 / 298e12 - 9 / 794.5e12);
  const double step_table = run_summary(dir_ / "table")["simulation"]["step_s"].get<double>();
  const double step_none = run_summary(dir_ / "none")["simulation"]["step_s"].get<double>();
  EXPECT_NEAR(step_table - step_none, expected, 1e-9 * step_table);

  const nlohmann::json table_gpu = run_summary(dir_ / "table")["compute_model"]["gpus"][0];
  EXPECT_EQ(table_gpu["fused_attention"], "table");
  EXPECT_NE(table_gpu["attention_table"].get<std::string>().find("attention/h100-80gb-flash2.csv"), std::string::npos);
  const nlohmann::json none_gpu = run_summary(dir_ / "none")["compute_model"]["gpus"][0];
  EXPECT_EQ(none_gpu["fused_attention"], "achievable_flops");
  EXPECT_FALSE(none_gpu.contains("attention_table"));
}

TEST_F(AttentionTable, TheWorkloadCommandSaysWhereFlashAttentionTimesCameFrom) {
  const auto h100 = run_dtsim("workload llama-7b --gpu h100-80gb", true);
  ASSERT_EQ(h100.exit_code, 0) << h100.err;
  EXPECT_NE(h100.output.find("FlashAttention from the measured table"), std::string::npos) << h100.output;
  // BERT-large's attention is unfused (its products are timed as products): no FlashAttention line.
  const auto bert = run_dtsim("workload bert-large --gpu h100-80gb", true);
  ASSERT_EQ(bert.exit_code, 0) << bert.err;
  EXPECT_EQ(bert.output.find("FlashAttention"), std::string::npos) << bert.output;
}

TEST_F(AttentionTable, ABadTableIsRefusedAtItsLineAndAMissingOneAtTheKey) {
  // A profile of its own: copied as it is, it still finds the shipped table by name; given a path, the table is
  // read from the profile's folder.
  std::string text = file_text(kSource + "/network_profiles/gpu/h100-80gb.ini");
  const std::string shipped = "attention_table = h100-80gb-flash2";
  const size_t at = text.find(shipped);
  ASSERT_NE(at, std::string::npos);
  std::ofstream(dir_ / "copy.ini") << text;
  const auto copy = run_dtsim("check " + kScenarios + "workload_llama_7b_lora.ini --set compute.matmul=tiles "
                              "--set gpu.profile=" + (dir_ / "copy.ini").string(), true);
  EXPECT_EQ(copy.exit_code, 0) << copy.err;
  text.replace(at, shipped.size(), "attention_table = mine.csv");
  std::ofstream(dir_ / "gpu.ini") << text;
  std::ofstream(dir_ / "mine.csv") << "# measured\nforward+backward,no,128,2048,320\nforward+backward,sometimes,128,2048,265\n";
  const std::string check = "check " + kScenarios + "workload_llama_7b_lora.ini --set compute.matmul=tiles "
                            "--set gpu.profile=" + (dir_ / "gpu.ini").string();
  const auto bad = run_dtsim(check, true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find((dir_ / "mine.csv").string() + ":3"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("causal 'sometimes' is neither yes nor no"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find('\n'), bad.err.size() - 1) << "one line: " << bad.err;

  std::ofstream(dir_ / "mine.csv") << "forward+backward,no,128,2048,320\nforward+backward,yes,128,2048,265\n";
  EXPECT_EQ(run_dtsim(check, true).exit_code, 0);

  const auto missing = run_dtsim(check + " --set gpu.attention_table=" + (dir_ / "absent.csv").string(), true);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("gpu.attention_table"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("not found"), std::string::npos) << missing.err;
}

TEST_F(AttentionTable, UnderTheRooflineTheKeyIsReportedAsWithoutEffect) {
  // Set on the command line, a relative path is the working folder's: refused here, where there is none.
  const std::string check = "check " + kScenarios + "workload_llama_7b_lora.ini --set gpu.profile=h100-80gb ";
  const auto relative = run_dtsim(check + "--set gpu.attention_table=attention/h100-80gb-flash2.csv", true);
  EXPECT_EQ(relative.exit_code, 2) << relative.err;
  EXPECT_NE(relative.err.find("not found"), std::string::npos) << relative.err;
  // A name is a shipped table, wherever it is set.
  const auto named = run_dtsim(check + "--set gpu.attention_table=a100-80gb-flash2", true);
  EXPECT_EQ(named.exit_code, 0) << named.err;
  EXPECT_NE(named.err.find("gpu.attention_table: has no effect with compute.matmul = roofline"), std::string::npos)
      << named.err;
  const auto unknown = run_dtsim(check + "--set gpu.attention_table=b200-flash9", true);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("b200-flash9.csv' not found"), std::string::npos) << unknown.err;
}

}  // namespace
