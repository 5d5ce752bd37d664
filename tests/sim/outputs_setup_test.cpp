// The setup line names the strategy that will run, and summary.json counts epochs and throughput in samples
// for every strategy (federated rounds are not steps of one global batch).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/config/run_config.hpp"
#include "sim/app/outputs.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/sim/topology_support.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

std::string setup_of(const std::string& text) {
  RunInputs in;
  in.config = make_run_config(parse_scenario("setup.ini", text, {}, testing::kProfiles));
  return describe_setup(in);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(SetupLine, NamesEachStrategy) {
  EXPECT_TRUE(has(setup_of("[cluster]\nworkers = 4\n[training]\nbatch_per_worker = 8\n"),
                  "synchronous data parallel with ring allreduce, global batch 32"));
  EXPECT_TRUE(has(setup_of("[training]\nstrategy = local\n[local]\nlocal_steps = 8\n"), "local SGD averaging every 8 steps"));
  const std::string ps = setup_of("[training]\nstrategy = async-ps\n[ps]\nservers = 2\nstaleness_bound = 3\n");
  EXPECT_TRUE(has(ps, "asynchronous parameter server (2 shards, staleness bound 3)")) << ps;
  const std::string fl = setup_of("[cluster]\nworkers = 10\n[training]\nstrategy = federated\n"
                                  "[fl]\nalgorithm = fedprox\nclients_per_round = 3\nrounds = 7\n");
  EXPECT_TRUE(has(fl, "federated fedprox, 3 of 10 clients per round for 7 rounds")) << fl;
  EXPECT_FALSE(has(fl, "synchronous"));
  const std::string topk = setup_of("[compression]\nkind = topk\nratio = 0.01\nerror_feedback = true\n");
  EXPECT_TRUE(has(topk, "topk compression 1 % with error feedback")) << topk;
  EXPECT_TRUE(has(setup_of("[compression]\nkind = powersgd\nrank = 4\n"), "powersgd compression rank 4"));
}

TEST(Summary, EpochsAndThroughputFollowTheStrategy) {
  RunInputs in;
  in.config = make_run_config(parse_scenario("setup.ini", "[cluster]\nworkers = 4\n[training]\nbatch_per_worker = 8\n",
                                              {}, testing::kProfiles));
  RunResult r;
  r.steps = 50;
  r.steps_per_epoch = 100;  // 3 200 samples a pass at 32 per step
  r.simulated_time_s = 2.0;
  nlohmann::json s = make_summary(in, r, 1.0);
  EXPECT_DOUBLE_EQ(s["epochs"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(s["samples_per_simulated_second"].get<double>(), 50.0 * 32 / 2.0);

  // Federated: 50 rounds that consumed 3 local epochs of the data in all.
  r.strategy_details = {{"epochs", 3.0}};
  s = make_summary(in, r, 1.0);
  EXPECT_DOUBLE_EQ(s["epochs"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(s["samples_per_simulated_second"].get<double>(), 3.0 * 3200 / 2.0);
}

// summary.json's compute_model: a run with numerics times its products in compute.math, with the GPU's
// efficiency under the roofline (the a100-40gb profile's 0.5 at its 19.5 TFLOP/s FP32 peak).
TEST(Summary, ComputeModelNamesTheModelAndItsInputs) {
  RunInputs in;
  in.config = make_run_config(parse_scenario("setup.ini", "[compute]\nmath = fp32\n", {}, testing::kProfiles));
  const nlohmann::json m = make_summary(in, RunResult{}, 1.0)["compute_model"];
  EXPECT_EQ(m["matmul"], "roofline");
  EXPECT_EQ(m["math"], "fp32");
  ASSERT_EQ(m["gpus"].size(), 1u);
  EXPECT_DOUBLE_EQ(m["gpus"][0]["peak_flops"].get<double>(), 19.5e12);
  EXPECT_DOUBLE_EQ(m["gpus"][0]["efficiency"].get<double>(), 0.5);
  EXPECT_FALSE(m["gpus"][0].contains("group"));
}

// What validate reads back from its run folders, and the scenario's crc32 a sweep's manifest records, read as
// every input file is (issue 57): a FIFO or a device in their place is not read (it blocked for ever), and a damaged
// file is no result. In a child under an alarm, so that a read that blocks fails the test.
TEST(OutputFiles, FifosAndDamagedFilesAreReadAsNoResult) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("dtsim_output_files_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  ASSERT_EQ(::mkfifo((dir / "summary.json").c_str(), 0644), 0);
  std::ofstream(dir / "damaged.json") << "{\"status\": ";
  std::ofstream(dir / "good.json") << "{\"status\": \"completed\"}";
  const std::string seen = dtsim::testing::run_in_child([&] {
    ::alarm(10);
    std::string out;
    for (const char* name : {"summary.json", "damaged.json", "good.json", "absent.json"})
      out += std::string(name) + "=" + (read_json_file((dir / name).string()) ? "read" : "none") + " ";
    return out + file_crc32((dir / "summary.json").string()) + " " + file_crc32("/dev/zero");
  });
  EXPECT_EQ(seen, "summary.json=none damaged.json=none good.json=read absent.json=none unreadable unreadable");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace dtsim::sim
