// The QA transformer end to end, as docs/qa.md runs it: pre-train the base with scenarios/qa_pretrain.ini, then
// fine-tune it with scenarios/qa_lora.ini. About ten minutes on two cores, most of it the 443 s pre-training
// (label: long; make test-all).
//
// The base's floors sit well below what docs/qa.md measured with the portable build (a base at 50.70 % exact
// match, medical 56.06 %, finance 45.45 %, still climbing when pre-training ends), so that a change of the
// numerics' rounding (another compiler, a native build), which can move the step at which the model leaves its
// plateau, does not fail them (the earlier native build's base reached 69.45 %); yet far above what a model that
// does not read the facts reaches: one that answers with a context's facts at random scores about 25 %, where the
// base stayed with learned positions (22.50 %). The fine-tuning floors are closer: from that base, seed 1's LoRA
// run ends at 51.70 % (1.00 point above the base) and full fine-tuning at 54.80 % (4.10 points above it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/cli/run_dtsim.hpp"

namespace {

namespace fs = std::filesystem;
using dtsim::testing::run_dtsim;

nlohmann::json run(const std::string& scenario, const fs::path& out, const std::string& extra) {
  const std::string args = "run " + std::string(DTSIM_SOURCE_DIR) + "/scenarios/" + scenario + ".ini --quiet --out " +
                           out.string() + " " + extra;
  const auto r = run_dtsim(args);
  if (r.exit_code != 0) throw std::runtime_error("dtsim " + args + " failed: " + r.output);
  std::ifstream f(out / "summary.json");
  std::stringstream text;
  text << f.rdbuf();
  return nlohmann::json::parse(text.str());
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
  return fields;
}

// The test_accuracy of metrics.csv's first row: the evaluation before any training step.
double step0_accuracy(const fs::path& out) {
  std::ifstream f(out / "metrics.csv");
  std::string header, row;
  std::getline(f, header);
  std::getline(f, row);
  const std::vector<std::string> names = split(header), values = split(row);
  for (size_t i = 0; i < names.size() && i < values.size(); ++i)
    if (names[i] == "test_accuracy") return std::stod(values[i]);
  throw std::runtime_error("no test_accuracy in " + (out / "metrics.csv").string());
}

TEST(LongQa, PretrainedBaseReadsTheFactsAndFineTuningKeepsImprovingIt) {
  const fs::path dir = fs::temp_directory_path() / ("dtsim_long_qa_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const nlohmann::json base = run("qa_pretrain", dir / "pretrain", "");
  ASSERT_EQ(base["status"], "completed");
  const double base_em = base["qa"]["test"]["exact_match"].get<double>();
  EXPECT_GE(base_em, 0.40);
  // Both domains are read, not only the easier one.
  EXPECT_GE(base["qa"]["medical"]["exact_match"].get<double>(), 0.40);
  EXPECT_GE(base["qa"]["finance"]["exact_match"].get<double>(), 0.30);

  const std::string from_base = "--set transformer.base=" + (dir / "pretrain" / "model.bin").string();
  const nlohmann::json lora = run("qa_lora", dir / "lora", from_base);
  // Before its first step the adapted model is the base (B = 0): the same exact match on the same questions.
  EXPECT_DOUBLE_EQ(step0_accuracy(dir / "lora"), base_em);
  const nlohmann::json full = run("qa_lora", dir / "full", from_base + " --set lora.rank=0");
  EXPECT_GT(lora["qa"]["test"]["exact_match"].get<double>(), base_em);
  EXPECT_GT(full["qa"]["test"]["exact_match"].get<double>(), base_em + 0.02);
  fs::remove_all(dir);
}

}  // namespace
