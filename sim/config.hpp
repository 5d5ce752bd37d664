// The typed view of a scenario that the simulator runs from. Built once from a validated Scenario; tests
// build it directly.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dtsim::sim {

class Scenario;

enum class MathMode { Fp32, Tf32, Bf16 };

struct GpuSpec {
  std::string name;
  double peak_fp32 = 0;  // FLOP/s
  double peak_tf32 = 0;
  double peak_bf16 = 0;
  double memory = 0;      // bytes
  double efficiency = 1;  // sustained fraction of peak

  double peak(MathMode m) const { return m == MathMode::Fp32 ? peak_fp32 : m == MathMode::Tf32 ? peak_tf32 : peak_bf16; }
  // The FLOP rate a simulated host of this GPU runs at.
  double sustained(MathMode m) const { return peak(m) * efficiency; }
};

struct FabricSpec {
  std::string name;
  double bandwidth = 0;       // nominal, bytes/s per port and direction
  double link_latency = 0;    // seconds per link
  double switch_latency = 0;  // seconds per switch traversal
  double efficiency = 1;      // achievable / nominal bandwidth
};

struct RunConfig {
  std::string name;
  std::string scenario_path;
  uint64_t seed = 1;

  int workers = 1;
  std::string topology = "star";
  GpuSpec gpu;
  FabricSpec fabric;
  std::string network_model = "cm02";
  bool crosstraffic = false;
  MathMode math = MathMode::Fp32;

  std::vector<int> hidden{256, 128};
  std::string dataset = "fashion-mnist";
  std::string data_path;
  int train_samples = 0;  // 0 = all
  int test_samples = 0;

  std::string strategy = "sync";
  int batch_per_worker = 32;
  int epochs = 1;
  int64_t max_steps = 0;  // 0 = no limit
  double lr = 0.05;
  double momentum = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  std::string collective = "ring";
  int evals_per_epoch = 1;
  bool save_model = false;

  nlohmann::json scenario_json;  // every key as resolved, for summary.json

  int global_batch() const { return workers * batch_per_worker; }
};

RunConfig make_run_config(const Scenario& scenario);

const char* to_string(MathMode m);

}  // namespace dtsim::sim
