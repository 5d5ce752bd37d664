// links.csv through the executable: for every strategy the bytes that left the hosts add up to summary.json's
// bytes_sent; a synchronous ring puts its closed-form bytes on every NIC; summary.json names the busiest
// link; trace.json carries the busiest links' utilisation and async staleness as counter tracks; and
// output.links = false writes no file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_dtsim.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kScenarios = std::string(DTSIM_SOURCE_DIR) + "/scenarios/";

struct LinkRow {
  std::string link, sharing;
  double bandwidth = 0, transfers = 0, bytes = 0, injected = 0, wire = 0;
  std::string mean, peak;  // empty on a fatpipe link
};

class Links : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = fs::temp_directory_path() / ("dtsim_links_" + std::to_string(::getpid()));
    fs::remove_all(out_);
  }
  void TearDown() override { fs::remove_all(out_); }
  void run(const std::string& scenario, const std::string& sets) {
    const auto o = dtsim::testing::run_dtsim("run " + kScenarios + scenario + " --quiet --out " + out_.string() + " " + sets);
    ASSERT_EQ(o.exit_code, 0) << o.output;
  }
  nlohmann::json summary() { return nlohmann::json::parse(std::ifstream(out_ / "summary.json")); }
  std::vector<LinkRow> links() {
    std::ifstream in(out_ / "links.csv");
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line,
              "link,sharing,bandwidth_Bps,transfers,bytes,injected_bytes,wire_bytes,mean_utilisation,peak_utilisation,"
              "peak_window_s");
    std::vector<LinkRow> rows;
    while (std::getline(in, line)) {
      std::vector<std::string> cells;
      std::stringstream cs(line);
      for (std::string cell; std::getline(cs, cell, ',');) cells.push_back(cell);
      EXPECT_EQ(cells.size(), 10u) << line;
      if (cells.size() != 10) continue;
      rows.push_back({cells[0], cells[1], std::stod(cells[2]), std::stod(cells[3]), std::stod(cells[4]),
                      std::stod(cells[5]), std::stod(cells[6]), cells[7], cells[8]});
    }
    return rows;
  }
  double injected() {
    double sum = 0;
    for (const LinkRow& r : links()) sum += r.injected;
    return sum;
  }
  fs::path out_;
};

TEST_F(Links, ARingPutsItsClosedFormBytesOnEveryNic) {
  // Stepwise: a transfer per ring step (fidelity auto would aggregate the quickstart's cheap steps).
  run("quickstart.ini", "--set training.max_steps=5 --set training.epochs=1 --set collective.fidelity=stepwise");
  const nlohmann::json s = summary();
  const double params = s["model"]["parameters"].get<double>();
  const int n = s["workers"].get<int>();
  // Every step's ring allreduce of the fp32 gradient sends each byte n−1 times in its reduce-scatter and n−1
  // times in its all-gather, out of some worker's NIC and into the next one's.
  const double per_step = 2.0 * (n - 1) * 4.0 * params;
  double up = 0, down = 0;
  for (const LinkRow& r : links()) {
    ASSERT_EQ(r.link.rfind("nic-worker", 0), 0u) << r.link << ": a star with one GPU per node has only NICs";
    (r.link.find("_UP") != std::string::npos ? up : down) += r.bytes;
    EXPECT_EQ(r.transfers, 5.0 * 2 * (n - 1)) << r.link;
    EXPECT_EQ(r.wire, r.bytes) << "no protocol framing is modelled here";
    const double mean = std::stod(r.mean), peak = std::stod(r.peak);
    EXPECT_GT(mean, 0.0);
    EXPECT_LE(mean, peak);
    EXPECT_LE(peak, 1.0 + 1e-9) << r.link;
  }
  EXPECT_EQ(up, 5 * per_step);
  EXPECT_EQ(down, 5 * per_step);
  EXPECT_EQ(injected(), s["bytes_sent"].get<double>());
  EXPECT_EQ(s["busiest_link"]["link"].get<std::string>().rfind("nic-worker", 0), 0u);
}

TEST_F(Links, BytesLeavingHostsAddUpToBytesSentForEveryStrategy) {
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"sync_vs_async.ini", "--set training.strategy=async-ps --set training.max_steps=6 --set ps.servers=2"},
      {"sync_vs_async.ini", "--set training.strategy=local --set training.max_steps=8"},
      {"fedprox_synthetic.ini", "--set fl.rounds=2"},
      {"two_sites.ini", "--set training.max_steps=3"},
      {"quickstart.ini", "--set training.max_steps=3 --set collective.fidelity=analytic"},
      {"hgx_rails.ini", "--set training.max_steps=35"},
  };
  for (const auto& [scenario, sets] : runs) {
    SCOPED_TRACE(scenario + " " + sets);
    run(scenario, sets);
    const nlohmann::json s = summary();
    EXPECT_GT(s["bytes_sent"].get<double>(), 0.0);
    EXPECT_EQ(injected(), s["bytes_sent"].get<double>());
    for (const LinkRow& r : links()) {
      EXPECT_GE(r.bytes, r.injected);
      if (r.sharing == "fatpipe") {
        EXPECT_EQ(r.mean, "") << r.link << ": a fatpipe's flows do not share it";
      } else {
        EXPECT_LE(std::stod(r.peak), 1.0 + 1e-9) << r.link;
      }
    }
  }
}

TEST_F(Links, TimingOnlyRunsCountTheirBucketsToo) {
  run("workload_llama_7b_lora.ini", "--set workload.steps=2");
  const nlohmann::json s = summary();
  EXPECT_EQ(injected(), s["simulation"]["bytes_sent"].get<double>());
  EXPECT_TRUE(s.contains("busiest_link"));
}

TEST_F(Links, TraceCarriesLinkUtilisationAndStalenessCounters) {
  run("sync_vs_async.ini", "--set training.strategy=async-ps --set training.max_steps=6 --set output.trace=true");
  const nlohmann::json trace = nlohmann::json::parse(std::ifstream(out_ / "trace.json"));
  const nlohmann::json s = summary();
  std::set<std::string> link_tracks;
  double max_staleness = -1;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "C") continue;
    const std::string name = e["name"];
    const double value = e["args"]["value"];
    if (name.rfind("link ", 0) == 0) {
      link_tracks.insert(name);
      EXPECT_GE(value, 0.0);
      EXPECT_LE(value, 1.0 + 1e-9) << name;
    } else {
      EXPECT_EQ(name, "staleness (updates behind)");
      max_staleness = std::max(max_staleness, value);
    }
  }
  EXPECT_GE(link_tracks.size(), 1u);
  EXPECT_LE(link_tracks.size(), 8u) << "the eight busiest links at most";
  EXPECT_TRUE(link_tracks.count("link " + s["busiest_link"]["link"].get<std::string>() + " utilisation") ||
              link_tracks.size() == 8u);
  ASSERT_GE(max_staleness, 0.0) << "a staleness counter";
  EXPECT_LE(max_staleness, s["strategy"]["max_staleness"].get<double>());
}

TEST_F(Links, ARunThatDivergesBeforeItsFirstEvaluationSaysHowFarItGot) {
  // A learning rate this large diverges within the first steps, long before the first evaluation row.
  run("sync_vs_async.ini", "--set training.strategy=async-ps --set training.lr=100 --set training.momentum=0");
  const nlohmann::json s = summary();
  ASSERT_EQ(s["status"], "diverged") << s.dump();
  EXPECT_GT(s["bytes_sent"].get<double>(), 0.0) << "gradients travelled before the divergence";
  EXPECT_EQ(injected(), s["bytes_sent"].get<double>());
  EXPECT_GT(s["time_breakdown_s"]["compute"].get<double>(), 0.0);
}

// A compressed synchronous run that diverges: the summary used to say 0 steps and 0 bytes (the step that
// diverged was combined a second time by the next worker out, which threw, and the progress was lost).
TEST_F(Links, ACompressedSyncRunThatDivergesCountsTheStepsAndBytesItRan) {
  run("topk_error_feedback.ini",
      "--set training.max_steps=16 --set data.train_samples=4096 --set data.test_samples=500 --set training.lr=50");
  const nlohmann::json s = summary();
  ASSERT_EQ(s["status"], "diverged") << s.dump();
  const int64_t steps = s["steps"].get<int64_t>();
  EXPECT_GE(steps, 1);
  EXPECT_LT(steps, 16);
  EXPECT_EQ(injected(), s["bytes_sent"].get<double>()) << "the bytes the links carried";
  EXPECT_GT(s["time_breakdown_s"]["compute"].get<double>(), 0.0);
  // The same for local SGD's model averaging.
  run("quickstart.ini", "--set training.max_steps=16 --set data.train_samples=4096 --set data.test_samples=500 "
                        "--set training.lr=3 --set training.strategy=local --set local.local_steps=2");
  const nlohmann::json l = summary();
  ASSERT_EQ(l["status"], "diverged") << l.dump();
  EXPECT_EQ(l["steps"].get<int64_t>() % 2, 0) << "a divergence is found at an averaging";
  EXPECT_EQ(injected(), l["bytes_sent"].get<double>());
}

// A federated run that diverges at its first round: the round was played (the clients trained and
// uploaded), so it counts, with its epoch and bytes; it used to say "for 0 rounds".
TEST_F(Links, AFederatedRunThatDivergesCountsTheRoundItPlayed) {
  run("quickstart.ini", "--set training.strategy=federated --set fl.rounds=3 --set training.lr=50 "
                        "--set data.train_samples=2048 --set data.test_samples=500");
  const nlohmann::json s = summary();
  ASSERT_EQ(s["status"], "diverged") << s.dump();
  EXPECT_EQ(s["divergence"]["step"].get<int64_t>(), s["steps"].get<int64_t>()) << "the round that diverged counts";
  EXPECT_GE(s["steps"].get<int64_t>(), 1);
  EXPECT_LT(s["steps"].get<int64_t>(), 3);
  EXPECT_EQ(s["strategy"]["rounds"].get<int64_t>(), s["steps"].get<int64_t>());
  // Every client took part and trained one local epoch a round: one epoch of the data per round.
  EXPECT_DOUBLE_EQ(s["epochs"].get<double>(), static_cast<double>(s["steps"].get<int64_t>()));
  EXPECT_EQ(injected(), s["bytes_sent"].get<double>());
}

// An asynchronous run that diverges names the updates the server applied, not its last evaluation's (0).
TEST_F(Links, AnAsyncRunThatDivergesNamesTheUpdatesItApplied) {
  const auto o = dtsim::testing::run_dtsim("run " + kScenarios + "quickstart.ini --out " + out_.string() +
                                           " --set training.strategy=async-ps --set training.lr=50 "
                                           "--set data.train_samples=2048 --set data.test_samples=500");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const nlohmann::json s = summary();
  ASSERT_EQ(s["status"], "diverged") << s.dump();
  const int64_t updates = s["strategy"]["updates"].get<int64_t>();
  EXPECT_GT(updates, 0);
  EXPECT_EQ(updates, s["divergence"]["step"].get<int64_t>()) << "the update whose loss diverged was applied";
  EXPECT_NE(o.output.find("count the server's " + std::to_string(updates) + " update"), std::string::npos) << o.output;
}

// A compressed federated upload is the whole message: SCAFFOLD's dense Δc counts with the compressed Δy, so
// the messages' wire bytes are the uploads' bytes (they used to count Δy alone: 320 of 2,760 B a client).
TEST_F(Links, ACompressedScaffoldUploadCountsItsControlVariate) {
  run("fedprox_synthetic.ini", "--set fl.rounds=2 --set fl.algorithm=scaffold --set compression.kind=topk "
                               "--set compression.ratio=0.1");
  const nlohmann::json s = summary();
  const nlohmann::json& c = s["strategy"]["compression"];
  EXPECT_EQ(c["wire_bytes"].get<uint64_t>(), s["strategy"]["bytes"]["up"].get<uint64_t>()) << s["strategy"].dump();
  // fp32 bytes: two vectors of the model's 610 values per upload.
  EXPECT_EQ(c["fp32_bytes"].get<uint64_t>(), c["messages"].get<uint64_t>() * 2 * 610 * 4);
  EXPECT_LT(c["compression_ratio"].get<double>(), 2.0) << "half the message is dense";
}

TEST_F(Links, CanBeTurnedOff) {
  run("quickstart.ini", "--set training.max_steps=2 --set output.links=false");
  EXPECT_FALSE(fs::exists(out_ / "links.csv"));
  EXPECT_FALSE(summary().contains("busiest_link"));
}

}  // namespace
