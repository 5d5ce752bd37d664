// The typed view of a scenario that the simulator runs from. Built once from a validated Scenario; tests
// build it directly.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/architectures.hpp"

#include "sim/config/cluster_config.hpp"
#include "sim/config/collective_config.hpp"
#include "sim/config/compression_config.hpp"
#include "sim/config/fl_config.hpp"
#include "sim/config/hardware_config.hpp"
#include "sim/config/heterogeneity_config.hpp"
#include "sim/config/ps_config.hpp"
#include "sim/config/strategy.hpp"
#include "sim/config/sync_config.hpp"

namespace dtsim::sim {

class Scenario;

// One named group of the label-group partition: which labels it owns and how many workers hold them.
struct LabelGroup {
  std::string name;
  std::vector<int> labels;
  int workers = 0;
};

struct DataConfig {
  double synthetic_alpha = 0.0;
  double synthetic_beta = 0.0;
  int synthetic_devices = 30;
  std::string partition = "none";  // none | iid | dirichlet | labels | lognormal | groups | natural
  double dirichlet_alpha = 0.5;
  int labels_per_worker = 2;
  double lognormal_sigma = 1.0;
  std::vector<LabelGroup> label_groups;
};

struct OptimizerConfig {
  std::string name = "sgd";  // sgd | adam | adamw | lars | lamb
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double trust_coefficient = 0.001;
};

struct ScheduleConfig {
  int base_batch = 0;              // 0 = the global batch
  std::string scaling = "none";    // none | linear | sqrt
  double warmup_epochs = 0.0;
  int64_t warmup_steps = 0;
  std::string decay = "constant";  // constant | step | cosine
  double decay_every_epochs = 30.0;
  double decay_gamma = 0.1;
  double min_lr = 0.0;
};

struct PrecisionConfig {
  std::string weights = "fp32";  // fp32 | bf16 | fp16
  std::string activations = "fp32";
  std::string gradients = "fp32";
  std::string loss_scaling = "none";  // none | static | dynamic
  double loss_scale = 65536.0;
  int64_t growth_interval = 2000;
};

struct RunConfig {
  std::string name;
  std::string scenario_path;
  uint64_t seed = 1;

  int workers = 1;
  GpuSpec gpu;
  FabricSpec fabric;
  ClusterConfig layout;                // topology, nodes, groups (cluster_config.hpp)
  HeterogeneityConfig heterogeneity;   // slow nodes, random slowdowns, background traffic, failures
  CollectiveConfig collectives;        // algorithm and fidelity (collective_config.hpp)
  std::string network_model = "cm02";
  bool crosstraffic = false;
  MathMode math = MathMode::Fp32;
  std::string device = "auto";  // cpu | cuda | auto

  models::Architecture arch = models::Architecture::Mlp;
  std::string activation = "relu";

  std::vector<int> hidden{256, 128};
  std::string dataset = "fashion-mnist";
  std::string data_path;
  int train_samples = 0;  // 0 = all
  int test_samples = 0;
  DataConfig data;

  Strategy strategy = Strategy::Sync;
  SyncConfig sync;                // sync and local (sync_config.hpp)
  PsConfig ps;                    // async-ps (ps_config.hpp)
  FlConfig fl;                    // federated (fl_config.hpp)
  CompressionConfig compression;  // every strategy (compression_config.hpp)
  int batch_per_worker = 32;
  int epochs = 1;
  int64_t max_steps = 0;  // 0 = no limit
  double lr = 0.05;
  double momentum = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  PrecisionConfig precision;
  int evals_per_epoch = 1;
  double target_accuracy = 0.0;  // 0 = none
  bool save_model = false;

  nlohmann::json scenario_json;  // every key as resolved, for summary.json

  // Samples behind one optimizer step: every worker's batch, times the accumulated micro-batches.
  int global_batch() const {
    // Accumulated micro-batches exist only where a group combines every step (sync.accumulation_steps).
    const int micro = strategy_descriptor(strategy).synchronous_group ? sync.accumulation_steps : 1;
    return workers * batch_per_worker * micro;
  }
};

// Builds the typed configuration and checks what involves several keys (throws InputError at the key).
RunConfig make_run_config(const Scenario& scenario);

// Parses data.label_groups ("medical:0-4:4; finance:5-9:4"); throws ValueError with a reason.
std::vector<LabelGroup> parse_label_groups(const std::string& text);

const char* to_string(MathMode m);

}  // namespace dtsim::sim
