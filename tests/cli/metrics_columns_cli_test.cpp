// What metrics.csv and the progress lines say per evaluation, through the executable: the asynchronous parameter
// server's staleness since the previous row (checked against summary.json's totals), empty cells for the other
// strategies, and progress lines that name what their count counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_dtsim.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kQuickstart = std::string(DTSIM_SOURCE_DIR) + "/scenarios/quickstart.ini";

std::vector<std::map<std::string, std::string>> rows_of(const fs::path& csv) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::istringstream h(line);
  for (std::string f; std::getline(h, f, ',');) header.push_back(f);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::map<std::string, std::string> row;
    size_t start = 0;
    for (const std::string& name : header) {
      const size_t comma = line.find(',', start);
      row[name] = line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      start = comma == std::string::npos ? line.size() : comma + 1;
    }
    rows.push_back(row);
  }
  return rows;
}

class MetricsColumns : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = fs::temp_directory_path() / ("dtsim_metrics_columns_" + std::to_string(::getpid()));
    fs::remove_all(out_);
  }
  void TearDown() override { fs::remove_all(out_); }
  fs::path out_;
};

TEST_F(MetricsColumns, AsyncRowsCarryTheStalenessSinceThePreviousRow) {
  const auto o = dtsim::testing::run_dtsim("run " + kQuickstart + " --out " + out_.string() +
                                           " --set training.strategy=async-ps --set training.max_steps=20" +
                                           " --set training.epochs=1 --set eval.per_epoch=40 --set stragglers.slow_workers=0:0.25" +
                                           " --set training.lr=0.01 --set training.momentum=0");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const auto rows = rows_of(out_ / "metrics.csv");
  ASSERT_GE(rows.size(), 4u);
  const nlohmann::json s = nlohmann::json::parse(std::ifstream(out_ / "summary.json"));
  EXPECT_EQ(rows[0].at("staleness_mean"), "") << "no gradient before the first row";
  double largest = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_FALSE(rows[i].at("staleness_mean").empty()) << i;
    const double mean = std::stod(rows[i].at("staleness_mean"));
    const double max = std::stod(rows[i].at("staleness_max"));
    EXPECT_LE(mean, max + 1e-9) << i;
    EXPECT_GE(mean, 0.0);
    largest = std::max(largest, max);
  }
  EXPECT_EQ(largest, s["strategy"]["max_staleness"].get<double>());
  EXPECT_GT(largest, 0.0) << "a slow worker's gradients arrive stale";
  // The progress lines count the server's updates, and the summary lines say how they relate to its steps.
  EXPECT_NE(o.output.find("\n  update "), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("the server's " + rows.back().at("step") + " updates"), std::string::npos) << o.output;
}

TEST_F(MetricsColumns, SyncRowsLeaveTheStalenessCellsEmpty) {
  const auto o = dtsim::testing::run_dtsim("run " + kQuickstart + " --out " + out_.string() +
                                           " --set training.max_steps=6 --set training.epochs=1");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  for (const auto& row : rows_of(out_ / "metrics.csv")) {
    EXPECT_EQ(row.at("staleness_mean"), "");
    EXPECT_EQ(row.at("staleness_max"), "");
  }
  EXPECT_NE(o.output.find("\n  step "), std::string::npos) << o.output;
}

}  // namespace
