// The sweep's plan (product order, folder names, the manifest round trip) and its tables on hand-made rows:
// summary.csv's statistics against their closed forms, CSV quoting, and which runs count as done.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "sim/app/sweep_plan.hpp"
#include "sim/app/sweep_results.hpp"
#include "sim/scenario/errors.hpp"

namespace dtsim::sim {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) out.push_back(field);
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

TEST(SweepPlan, TheProductRunsInOdometerOrderWithNamedFolders) {
  const SweepPlan plan = make_sweep_plan("s.ini", {"training.epochs=1"},
                                         {parse_vary("fabric.profile=ib-hdr-200,roce-100"),
                                          parse_vary("training.lr=0.05,0.1,0.2"), seeds_as_vary(2)});
  ASSERT_EQ(plan.runs.size(), 12u);
  EXPECT_EQ(plan.runs[0].name, "fabric.profile=ib-hdr-200,training.lr=0.05,run.seed=1");
  EXPECT_EQ(plan.runs[1].name, "fabric.profile=ib-hdr-200,training.lr=0.05,run.seed=2");
  EXPECT_EQ(plan.runs[2].name, "fabric.profile=ib-hdr-200,training.lr=0.1,run.seed=1");
  EXPECT_EQ(plan.runs[11].name, "fabric.profile=roce-100,training.lr=0.2,run.seed=2");
  EXPECT_EQ(plan.runs[5].overrides(),
            (std::vector<std::string>{"fabric.profile=ib-hdr-200", "training.lr=0.2", "run.seed=2"}));
  EXPECT_EQ(plan.group_keys(), (std::vector<std::string>{"fabric.profile", "training.lr"}));
  EXPECT_TRUE(plan.varies_seed());
  // Unsafe characters in a value become '_' in the folder name, not in the value.
  const SweepPlan paths = make_sweep_plan("s.ini", {}, {parse_vary("fabric.profile=my fabrics/ib.ini,roce-100")});
  EXPECT_EQ(paths.runs[0].name, "fabric.profile=my_fabrics_ib.ini");
  EXPECT_EQ(*paths.runs[0].value_of("fabric.profile"), "my fabrics/ib.ini");
  // The manifest describes the same plan.
  const SweepPlan back = SweepPlan::from_manifest(plan.manifest(), "sweep.json");
  ASSERT_EQ(back.runs.size(), plan.runs.size());
  for (size_t i = 0; i < plan.runs.size(); ++i) EXPECT_EQ(back.runs[i].name, plan.runs[i].name);
  EXPECT_EQ(back.manifest(), plan.manifest());
  EXPECT_THROW(SweepPlan::from_manifest(nlohmann::json{{"format", "other"}}, "sweep.json"), InputError);
  EXPECT_THROW(make_sweep_plan("s.ini", {}, {parse_vary("a.b=1,2,3"), parse_vary("c.d=1,2")}, 5), InputError);
}

TEST(SweepTables, SummaryStatisticsMatchTheirClosedForms) {
  const SweepPlan plan = make_sweep_plan("s.ini", {}, {parse_vary("training.lr=0.1,0.2"), seeds_as_vary(3)});
  const std::vector<double> accuracy = {0.5, 0.7, 0.9, 0.25, 0.25, 0.25};
  std::vector<RunRow> rows;
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    RunRow row;
    row.run = &plan.runs[i];
    row.status = "completed";
    row.numbers["final_test_accuracy"] = accuracy[i];
    if (i != 2) row.numbers["bytes_sent"] = 100.0 * static_cast<double>(i + 1);  // one run lacks it
    rows.push_back(row);
  }
  rows[5].status = "diverged";
  const std::vector<std::string> table = lines(summary_csv(plan, rows));
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[0],
            "training.lr,runs,statuses,final_test_accuracy_mean,final_test_accuracy_std,final_test_accuracy_min,"
            "final_test_accuracy_max,bytes_sent_mean,bytes_sent_std,bytes_sent_min,bytes_sent_max");
  const std::vector<std::string> a = fields(table[1]);
  EXPECT_EQ(a[0], "0.1");
  EXPECT_EQ(a[1], "3");
  EXPECT_EQ(a[2], "completed:3");
  EXPECT_NEAR(std::stod(a[3]), 0.7, 1e-15);
  EXPECT_NEAR(std::stod(a[4]), 0.2, 1e-15);  // sqrt(((-0.2)^2 + 0 + 0.2^2) / 2)
  EXPECT_EQ(std::stod(a[5]), 0.5);
  EXPECT_EQ(std::stod(a[6]), 0.9);
  EXPECT_EQ(std::stod(a[7]), 150.0);                            // runs 1 and 2 only
  EXPECT_NEAR(std::stod(a[8]), 100.0 / std::sqrt(2.0), 1e-12);  // |100 - 200| / sqrt(2)
  const std::vector<std::string> b = fields(table[2]);
  EXPECT_EQ(b[2], "completed:2 diverged:1");
  EXPECT_EQ(std::stod(b[3]), 0.25);
  EXPECT_EQ(std::stod(b[4]), 0.0);
  // One value: no sample standard deviation.
  const SweepPlan single = make_sweep_plan("s.ini", {}, {parse_vary("training.lr=0.1")});
  RunRow one;
  one.run = &single.runs[0];
  one.status = "completed";
  one.numbers["steps"] = 30;
  EXPECT_EQ(lines(summary_csv(single, {one}))[1], "0.1,1,completed:1,30,,30,30");
}

TEST(SweepTables, ResultsQuoteNamesWithCommasAndKeepEveryRun) {
  const SweepPlan plan = make_sweep_plan("s.ini", {}, {parse_vary("training.lr=0.1,0.2"), parse_vary("run.seed=7")});
  std::vector<RunRow> rows(2);
  rows[0].run = &plan.runs[0];
  rows[0].status = "completed";
  rows[0].numbers["steps"] = 12;
  rows[0].status_reason = "completed, but its accuracy ended 40.1 points below its best, 50.1 %";
  rows[1].run = &plan.runs[1];
  rows[1].status = "missing";
  const std::vector<std::string> table = lines(results_csv(plan, rows));
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[0], "run,training.lr,run.seed,status,steps,status_reason");
  EXPECT_EQ(table[1], "\"training.lr=0.1,run.seed=7\",0.1,7,completed,12,"
                      "\"completed, but its accuracy ended 40.1 points below its best, 50.1 %\"");
  EXPECT_EQ(table[2], "\"training.lr=0.2,run.seed=7\",0.2,7,missing,,");
  EXPECT_TRUE(run_is_done(rows[0]));
  EXPECT_FALSE(run_is_done(rows[1]));
  RunRow r;
  for (const char* status : {"diverged", "failed"}) {
    r.status = status;
    EXPECT_TRUE(run_is_done(r)) << status;
  }
  for (const char* status : {"interrupted", "unreadable", "missing"}) {
    r.status = status;
    EXPECT_FALSE(run_is_done(r)) << status;
  }
}

}  // namespace
}  // namespace dtsim::sim
