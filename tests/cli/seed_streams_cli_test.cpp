// The seed streams through the executable: the model seed alone decides the initial weights (the test loss
// before the first step), the data seed alone the batches (the loss after training from the same weights),
// and summary.json reports all three seeds and the slow workers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli/run_dtsim.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kQuickstart = std::string(DTSIM_SOURCE_DIR) + "/scenarios/quickstart.ini";

struct Outcome {
  std::string initial_test_loss;  // metrics.csv's first row (before any step), as printed
  std::string final_test_loss;
  nlohmann::json summary;
};

Outcome run_with(const std::string& sets) {
  const fs::path out = fs::temp_directory_path() / ("dtsim_seeds_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const auto o = dtsim::testing::run_dtsim("run " + kQuickstart + " --quiet --out " + out.string() +
                                           " --set training.max_steps=12 --set training.epochs=1 " + sets);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  std::ifstream metrics(out / "metrics.csv");
  std::string header, first, line, last;
  std::getline(metrics, header);
  std::getline(metrics, first);
  while (std::getline(metrics, line)) last = line;
  const auto field = [&](const std::string& row, const std::string& name) {
    std::istringstream h(header), r(row);
    std::string hn, rv;
    while (std::getline(h, hn, ',') && std::getline(r, rv, ','))
      if (hn == name) return rv;
    return std::string("?");
  };
  std::ifstream s(out / "summary.json");
  Outcome result{field(first, "test_loss"), field(last, "test_loss"), nlohmann::json::parse(s)};
  fs::remove_all(out);
  return result;
}

TEST(SeedStreamsCli, TheModelSeedDecidesTheInitialWeightsAndTheDataSeedTheBatches) {
  const Outcome base = run_with("--set run.seed=5");
  const Outcome data = run_with("--set run.seed=5 --set run.data_seed=6");
  const Outcome model = run_with("--set run.seed=5 --set run.model_seed=6");
  EXPECT_EQ(data.initial_test_loss, base.initial_test_loss) << "the same initial weights";
  EXPECT_NE(data.final_test_loss, base.final_test_loss) << "other batches";
  EXPECT_NE(model.initial_test_loss, base.initial_test_loss) << "other initial weights";
  EXPECT_EQ(base.summary["seeds"], (nlohmann::json{{"model", 5}, {"data", 5}, {"heterogeneity", 5}}));
  EXPECT_EQ(data.summary["seeds"], (nlohmann::json{{"model", 5}, {"data", 6}, {"heterogeneity", 5}}));
}

TEST(SeedStreamsCli, SummaryListsTheSlowWorkersWhichTheDataSeedLeavesAlone) {
  const std::string stragglers = "--set stragglers.slow_fraction=0.25 --set stragglers.slow_factor=0.5 --set run.seed=9";
  const Outcome a = run_with(stragglers + " --set run.data_seed=1");
  const Outcome b = run_with(stragglers + " --set run.data_seed=2");
  ASSERT_TRUE(a.summary.contains("slow_workers"));
  EXPECT_EQ(a.summary["slow_workers"].size(), 2u);  // a quarter of 8
  EXPECT_EQ(a.summary["slow_workers"], b.summary["slow_workers"]);
  EXPECT_EQ(a.summary["slow_workers"][0]["speed_factor"].get<double>(), 0.5);
}

}  // namespace
