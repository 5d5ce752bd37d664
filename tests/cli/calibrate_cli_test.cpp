// dtsim calibrate end to end on the CPU backend: the profile it writes is the one a later command reads back
// (the rates dtsim workload reports equal those derived by hand from calibration.csv), and bad input is refused
// with exit 2 without touching what is already written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_dtsim.hpp"

namespace {

namespace fs = std::filesystem;
using dtsim::testing::run_dtsim;

struct Folder {
  fs::path path = fs::temp_directory_path() / ("dtsim_calibrate_" + std::to_string(getpid()));
  Folder() { fs::create_directories(path); }
  ~Folder() { fs::remove_all(path); }
};

std::string read(const fs::path& file) {
  std::ifstream f(file);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream s(line);
  std::string field;
  while (std::getline(s, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

// What the profile must hold, from calibration.csv's rows: the fastest product's rate, the largest product's
// rate over it, the bandwidth over the largest vectors and the empty call's time.
struct Expected {
  double peak = 0, largest_flops = 0, largest_rate = 0, largest_stream = 0, bandwidth = 0, launch = 0;
  int products = 0, streams = 0, empty_calls = 0;
};

Expected from_csv(const std::string& csv) {
  Expected e;
  std::stringstream lines(csv);
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) {
    const std::vector<std::string> f = split(line);
    if (f.size() < 9) continue;
    const double flops = std::stod(f[5]), bytes = std::stod(f[6]), seconds = std::stod(f[7]);
    if (f[0] == "gemm") {
      ++e.products;
      e.peak = std::max(e.peak, flops / seconds);
      if (flops > e.largest_flops) {
        e.largest_flops = flops;
        e.largest_rate = flops / seconds;
      }
    } else if (f[0] == "axpy") {
      ++e.streams;
      if (bytes > e.largest_stream) {
        e.largest_stream = bytes;
        e.bandwidth = bytes / seconds;
      }
    } else if (f[0] == "empty_call") {
      ++e.empty_calls;
      e.launch = seconds;
    }
  }
  return e;
}

TEST(Calibrate, WritesAProfileThatALaterCommandReadsBack) {
  Folder f;
  const fs::path out = f.path / "cpu";
  const auto cal = run_dtsim("calibrate --quick --backend cpu --memory 16GB --name bench-cpu --out " + out.string());
  ASSERT_EQ(cal.exit_code, 0) << cal.output;
  EXPECT_NE(cal.output.find("use it: --set gpu.profile="), std::string::npos) << cal.output;
  const Expected e = from_csv(read(out / "calibration.csv"));
  EXPECT_EQ(e.products, 4);
  EXPECT_EQ(e.streams, 2);
  EXPECT_EQ(e.empty_calls, 1);

  // fp32: products at peak_fp32 × efficiency, which the profile sets to the largest product's rate.
  const auto w = run_dtsim("workload resnet50 --precision fp32 --format json --gpu " + (out / "gpu.ini").string(), true);
  ASSERT_EQ(w.exit_code, 0) << w.err;
  const nlohmann::json doc = nlohmann::json::parse(w.output);
  const nlohmann::json& gpu = doc["gpu"];
  EXPECT_EQ(gpu["name"], "bench-cpu");
  EXPECT_DOUBLE_EQ(gpu["memory_bytes"].get<double>(), 16e9);
  // The .ini holds six significant digits.
  EXPECT_NEAR(gpu["matmul_flops"].get<double>(), e.peak, 1e-5 * e.peak);
  EXPECT_NEAR(doc["at_gpu_efficiency"]["efficiency"].get<double>(), e.largest_rate / e.peak, 1e-5);
  EXPECT_NEAR(gpu["memory_bandwidth"].get<double>(), e.bandwidth, 1e-5 * e.bandwidth);
  EXPECT_NEAR(gpu["launch_overhead_s"].get<double>(), e.launch, 1e-5 * e.launch);

  // A run reads it as well: the scenario checks with the calibrated GPU.
  const auto check = run_dtsim("check " + std::string(DTSIM_SOURCE_DIR) + "/scenarios/workload_resnet50.ini " +
                               "--set gpu.profile=" + (out / "gpu.ini").string());
  EXPECT_EQ(check.exit_code, 0) << check.output;

  // The attention op, 2 shapes × 2 masks, forward and forward + backward each: the profile's attention table,
  // which a FlashAttention run under compute.matmul = tiles times its attention from (the SM count is not
  // measured, so the run gives it).
  const std::string table = read(out / "attention.csv");
  int forward = 0, pair = 0;
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    forward += line.rfind("forward,", 0) == 0;
    pair += line.rfind("forward+backward,", 0) == 0;
  }
  EXPECT_EQ(forward, 4) << table;
  EXPECT_EQ(pair, 4) << table;
  EXPECT_NE(read(out / "gpu.ini").find("\nattention_table = attention.csv\n"), std::string::npos);
  const fs::path run = f.path / "run";
  const auto lora = run_dtsim("run " + std::string(DTSIM_SOURCE_DIR) + "/scenarios/workload_llama_7b_lora.ini --quiet " +
                                  "--set cluster.workers=1 --set cluster.gpus_per_node=1 --set cluster.topology=star " +
                                  "--set workload.steps=2 --set compute.matmul=tiles --set gpu.multiprocessors=1 " +
                                  "--set gpu.memory=1TB --set gpu.profile=" + (out / "gpu.ini").string() +
                                  " --out " + run.string(),
                              true);
  ASSERT_EQ(lora.exit_code, 0) << lora.err;
  const nlohmann::json model = nlohmann::json::parse(read(run / "summary.json"))["compute_model"]["gpus"][0];
  EXPECT_EQ(model["fused_attention"], "table");
  EXPECT_EQ(fs::path(model["attention_table"].get<std::string>()).filename(), "attention.csv");
}

TEST(Calibrate, RefusesToOverwriteAndBadFlags) {
  Folder f;
  const fs::path out = f.path / "taken";
  fs::create_directories(out);
  { std::ofstream(out / "gpu.ini") << "mine\n"; }
  const auto again = run_dtsim("calibrate --quick --backend cpu --out " + out.string(), true);
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.err.find("--out"), std::string::npos) << again.err;
  EXPECT_EQ(read(out / "gpu.ini"), "mine\n");
  EXPECT_FALSE(fs::exists(out / "calibration.csv"));

  const auto no_out = run_dtsim("calibrate --quick --backend cpu", true);
  EXPECT_EQ(no_out.exit_code, 2) << no_out.output;
  EXPECT_NE(no_out.err.find("--out: is required"), std::string::npos) << no_out.err;
  const auto backend = run_dtsim("calibrate --quick --backend tpu --out " + (f.path / "b").string(), true);
  EXPECT_EQ(backend.exit_code, 2) << backend.output;
  EXPECT_NE(backend.err.find("--backend"), std::string::npos) << backend.err;
  const auto memory = run_dtsim("calibrate --quick --backend cpu --memory 0GB --out " + (f.path / "m").string(), true);
  EXPECT_EQ(memory.exit_code, 2) << memory.output;
  EXPECT_NE(memory.err.find("--memory"), std::string::npos) << memory.err;
  EXPECT_FALSE(fs::exists(f.path / "b"));
  EXPECT_FALSE(fs::exists(f.path / "m"));
  // A name that the .ini could not hold ('#' starts a comment there).
  const auto name = run_dtsim("calibrate --quick --backend cpu --name 'a#b' --out " + (f.path / "n").string(), true);
  EXPECT_EQ(name.exit_code, 2) << name.output;
  EXPECT_NE(name.err.find("--name"), std::string::npos) << name.err;
  // A folder that cannot be made: its parent is a file. Said before anything is measured.
  { std::ofstream(f.path / "file") << "x\n"; }
  const auto unmakeable = run_dtsim("calibrate --quick --backend cpu --out " + (f.path / "file" / "sub").string(), true);
  EXPECT_EQ(unmakeable.exit_code, 2) << unmakeable.output;
  EXPECT_NE(unmakeable.err.find("cannot make the folder"), std::string::npos) << unmakeable.err;
  EXPECT_EQ(unmakeable.output.find("quick sweep"), std::string::npos) << unmakeable.output;
}

}  // namespace
