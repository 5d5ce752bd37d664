// trace.json through the executable: a Chrome trace-event timeline whose spans add up, per category, to
// summary.json's time breakdown (the same seconds, seen per step), one compute span per worker and step, tracks
// whose spans never overlap, synchronous steps whose allreduce ends together on every worker, the step cap, and
// the keys reported where they have no effect.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/cli/run_dtsim.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kQuickstart = std::string(DTSIM_SOURCE_DIR) + "/scenarios/quickstart.ini";
const std::string kShort = " --set training.max_steps=8 --set training.epochs=1";

class Trace : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = fs::temp_directory_path() / ("dtsim_trace_" + std::to_string(::getpid()));
    fs::remove_all(out_);
  }
  void TearDown() override { fs::remove_all(out_); }
  dtsim::testing::DtsimOutcome run(const std::string& sets, bool separate = false) {
    return dtsim::testing::run_dtsim("run " + kQuickstart + " --quiet --out " + out_.string() + kShort + " " + sets, separate);
  }
  nlohmann::json file(const char* name) { return nlohmann::json::parse(std::ifstream(out_ / name)); }
  std::vector<nlohmann::json> spans() {
    std::vector<nlohmann::json> out;
    const nlohmann::json trace = file("trace.json");  // kept: a range-for over a temporary's member would dangle
    for (const auto& e : trace["traceEvents"])
      if (e["ph"] == "X") out.push_back(e);
    return out;
  }
  fs::path out_;
};

TEST_F(Trace, SpansAddUpToTheSummarysTimeBreakdown) {
  const auto o = run("--set output.trace=true --set stragglers.slow_workers=0:0.5");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const nlohmann::json s = file("summary.json");
  const std::vector<nlohmann::json> all = spans();
  std::map<std::string, double> seconds;
  std::map<int, std::vector<std::pair<double, double>>> tracks;
  std::map<int64_t, std::set<double>> allreduce_ends;
  int compute_spans = 0;
  for (const auto& e : all) {
    const double start = e["ts"].get<double>(), dur = e["dur"].get<double>();
    EXPECT_GT(dur, 0.0);
    seconds[e["cat"].get<std::string>()] += dur / 1e6;
    tracks[e["tid"].get<int>()].push_back({start, start + dur});
    if (e["name"] == "compute") ++compute_spans;
    if (e["name"] == "allreduce") allreduce_ends[e["args"]["step"].get<int64_t>()].insert(start + dur);
  }
  const double workers = 8;
  for (const char* category : {"compute", "idle", "communication"}) {
    const double expected = s["time_breakdown_s"][category].get<double>();
    EXPECT_NEAR(seconds[category] / workers, expected, 1e-9 * std::max(1.0, expected) + 1e-12) << category;
  }
  EXPECT_GT(seconds["idle"], 0.0) << "the fast workers wait for worker 0";
  EXPECT_EQ(compute_spans, 8 * 8);
  EXPECT_EQ(tracks.size(), 8u);
  for (auto& [track, intervals] : tracks) {
    std::sort(intervals.begin(), intervals.end());
    for (size_t i = 1; i < intervals.size(); ++i)
      EXPECT_LE(intervals[i - 1].second, intervals[i].first + 1e-6) << "track " << track << " overlaps itself";
  }
  ASSERT_EQ(allreduce_ends.size(), 8u);
  for (const auto& [step, ends] : allreduce_ends)
    EXPECT_LT(*ends.rbegin() - *ends.begin(), 1e-6) << "step " << step << ": every worker leaves the allreduce together";
  // Track names for the viewer.
  int named = 0;
  const nlohmann::json trace = file("trace.json");
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") ++named;
  EXPECT_EQ(named, 8);
}

TEST_F(Trace, AsyncWorkersComputePushAndPullOnTheirOwnClock) {
  const auto o = run("--set output.trace=true --set training.strategy=async-ps --set training.lr=0.01 "
                     "--set training.momentum=0 --set stragglers.slow_workers=0:0.25");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const nlohmann::json s = file("summary.json");
  std::map<std::string, double> seconds;
  std::map<int, int> computes;
  std::map<int, double> compute_seconds;
  for (const auto& e : spans()) {
    seconds[e["cat"].get<std::string>()] += e["dur"].get<double>() / 1e6;
    if (e["name"] != "compute") continue;
    ++computes[e["tid"].get<int>()];
    compute_seconds[e["tid"].get<int>()] += e["dur"].get<double>();
  }
  // Without a staleness bound no pull is held: compute and communication are the summary's, idle is nil.
  for (const char* category : {"compute", "communication"}) {
    const double expected = s["time_breakdown_s"][category].get<double>();
    EXPECT_NEAR(seconds[category] / 8, expected, 1e-9 * std::max(1.0, expected)) << category;
  }
  // Worker 0 runs at a quarter of the speed: each of its gradients takes 4 times as long.
  ASSERT_EQ(computes.size(), 8u);
  for (int w = 1; w < 8; ++w)
    EXPECT_NEAR((compute_seconds[0] / computes[0]) / (compute_seconds[w] / computes[w]), 4.0, 1e-6) << w;
  int64_t gradients = 0;
  for (const auto& [w, n] : computes) gradients += n;
  EXPECT_EQ(gradients, s["strategy"]["gradients_applied"].get<int64_t>()) << "every gradient computed was applied";
}

TEST_F(Trace, RecordsOnlyTheFirstTraceSteps) {
  ASSERT_EQ(run("--set output.trace=true --set output.trace_steps=3").exit_code, 0);
  int compute = 0;
  int64_t last_step = -1;
  for (const auto& e : spans()) {
    compute += e["name"] == "compute" ? 1 : 0;
    last_step = std::max(last_step, e["args"]["step"].get<int64_t>());
  }
  EXPECT_EQ(compute, 3 * 8);
  EXPECT_EQ(last_step, 2);
}

TEST_F(Trace, IsWrittenOnlyWhenAskedAndReportedWhereItHasNoEffect) {
  ASSERT_EQ(run("").exit_code, 0);
  EXPECT_FALSE(fs::exists(out_ / "trace.json"));
  const auto unused = run("--set output.trace_steps=5", true);
  EXPECT_EQ(unused.exit_code, 0);
  EXPECT_NE(unused.err.find("output.trace_steps: has no effect without output.trace = true"), std::string::npos) << unused.err;
}

TEST_F(Trace, FederatedClientsDownloadTrainAndUploadEachRound) {
  const auto o = dtsim::testing::run_dtsim("run " + std::string(DTSIM_SOURCE_DIR) + "/scenarios/fedprox_synthetic.ini --quiet --out " +
                                           out_.string() + " --set fl.rounds=3 --set output.trace=true --strict");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const nlohmann::json s = file("summary.json");
  const int clients = s["workers"].get<int>();
  std::map<std::string, double> seconds;
  std::map<int64_t, int> aggregations;
  std::map<std::pair<int, int64_t>, std::vector<std::string>> client_rounds;  // (client, round) -> span names in order
  for (const auto& e : spans()) {
    seconds[e["cat"].get<std::string>()] += e["dur"].get<double>() / 1e6;
    const int track = e["tid"].get<int>();
    const int64_t round = e["args"]["step"].get<int64_t>();
    if (track == clients) {
      EXPECT_EQ(e["name"], "aggregate");
      ++aggregations[round];
    } else {
      client_rounds[{track, round}].push_back(e["name"].get<std::string>());
    }
  }
  // Per category, the clients' spans are summary.json's time breakdown (a mean over clients).
  for (const char* category : {"compute", "communication"}) {
    const double expected = s["time_breakdown_s"][category].get<double>();
    EXPECT_NEAR(seconds[category] / clients, expected, 1e-9 * std::max(1.0, expected)) << category;
  }
  EXPECT_EQ(aggregations.size(), 3u) << "one aggregation per round, on the server's track";
  ASSERT_FALSE(client_rounds.empty());
  for (const auto& [key, names] : client_rounds) {
    EXPECT_EQ(names.front(), "download") << "client " << key.first << " round " << key.second;
    if (names.size() > 1) {
      EXPECT_EQ(names.back(), "upload") << "client " << key.first << " round " << key.second;
    }
  }
}

}  // namespace
