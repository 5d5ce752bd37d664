// The typed view of a scenario that the simulator runs from. Built once from a validated Scenario; tests
// build it directly.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpu/backend.hpp"
#include "models/architectures.hpp"
#include "models/workload/compute_time.hpp"

#include "sim/config/cluster_config.hpp"
#include "sim/config/collective_config.hpp"
#include "sim/config/compression_config.hpp"
#include "sim/config/data_config.hpp"
#include "sim/config/fl_config.hpp"
#include "sim/config/hardware_config.hpp"
#include "sim/config/heterogeneity_config.hpp"
#include "sim/config/numerics_config.hpp"
#include "sim/config/ps_config.hpp"
#include "sim/config/qa_model_config.hpp"
#include "sim/config/strategy.hpp"
#include "sim/config/sync_config.hpp"
#include "sim/config/workload_config.hpp"

namespace dtsim::sim {

class Scenario;

struct RunConfig {
  std::string name;
  std::string framework;  // framework.name, else framework.profile; empty = none
  std::string scenario_path;
  uint64_t seed = 1;  // run.seed: compression's random choices, and the default of the three streams below
  // Separate seed streams, each run.seed unless set, so that one source of randomness can vary while the
  // others stay fixed (e.g. new initialisations on the same slow workers).
  std::optional<uint64_t> model_seed_set;          // run.model_seed: weight initialisation
  std::optional<uint64_t> data_seed_set;           // run.data_seed: data order, partition, synthetic data
  std::optional<uint64_t> heterogeneity_seed_set;  // run.heterogeneity_seed: slow workers, slowed steps, rounds
  uint64_t model_seed() const { return model_seed_set.value_or(seed); }
  uint64_t data_seed() const { return data_seed_set.value_or(seed); }
  uint64_t heterogeneity_seed() const { return heterogeneity_seed_set.value_or(seed); }

  int workers = 1;
  GpuSpec gpu;  // [gpu]; under cluster.groups the first group's (the section is on no node): see gpus_in_use
  FabricSpec fabric;
  ClusterConfig layout;                // topology, nodes, groups (cluster_config.hpp)
  HeterogeneityConfig heterogeneity;   // slow nodes, random slowdowns, background traffic, failures
  CollectiveConfig collectives;        // algorithm and fidelity (collective_config.hpp)
  NetworkModel network_model = NetworkModel::Cm02;
  bool crosstraffic = false;
  MathMode math = MathMode::Fp32;
  MatmulModel matmul = MatmulModel::Roofline;  // compute.matmul
  models::OptimizerKernels optimizer_kernels = models::OptimizerKernels::Fused;  // compute.optimizer_kernels
  models::KernelIssue kernel_issue;  // compute.host_dispatch and compute.cuda_graphs
  gpu::Device device = gpu::Device::Auto;

  models::Architecture arch = models::Architecture::Mlp;
  models::Activation activation = models::Activation::Relu;
  models::InitScheme init = models::InitScheme::HeUniform;  // model.init

  std::vector<int> hidden{256, 128};
  QaModelConfig qa_model;  // model.arch = transformer: [transformer] and [lora] (qa_model_config.hpp)
  DataConfig data;  // dataset and its split over the workers (data_config.hpp)

  Strategy strategy = Strategy::Sync;
  SyncConfig sync;                // sync and local (sync_config.hpp)
  PsConfig ps;                    // async-ps (ps_config.hpp)
  FlConfig fl;                    // federated (fl_config.hpp)
  CompressionConfig compression;  // every strategy (compression_config.hpp)
  WorkloadConfig workload;        // a timing-only run of a catalog workload (workload_config.hpp)
  int batch_per_worker = 32;
  bool cap_batch_at_shard = false;  // a shard smaller than the batch is the batch (full-batch steps)
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
  bool stop_on_divergence = true;   // the first divergence ends the run (status diverged)
  double divergence_factor = 100.0; // a training loss above this × max(1, the starting loss) is a divergence
  bool save_model = false;
  bool trace = false;          // output.trace: write trace.json
  int64_t trace_steps = 100;   // output.trace_steps: steps recorded in it
  bool links = true;           // output.links: write links.csv

  nlohmann::json scenario_json;  // every key as resolved, for summary.json
  std::vector<std::string> command_line_sets;  // "key=value" set on the command line, for summary.json

  // Samples behind one optimizer step: every worker's batch, times the accumulated micro-batches.
  // In 64 bits: the keys' ranges allow 65,536 workers × 10^6 × 10^5, far past an int; a batch larger than the
  // training set is refused (prepare_run) before anything divides by it.
  int64_t global_batch() const { return int64_t{workers} * batch_per_worker * accumulation(); }
  // Micro-batches accumulated per optimizer step: only where a group combines every step (sync.accumulation_steps).
  int accumulation() const { return strategy_descriptor(strategy).synchronous_group ? sync.accumulation_steps : 1; }
};

// The GPUs the run's nodes hold, each kind once: the [gpu] section's, or under cluster.groups each group's.
std::vector<const GpuSpec*> gpus_in_use(const RunConfig& config);

// The options make_collective takes for this run's collectives (CollectiveConfig::options, with the least and
// the greatest compute capability among the GPUs in use, as NCCL takes them; an unknown one makes both unknown).
CollectiveOptions collective_options(const RunConfig& config);

// Local SGD with H > 1 and no synchronous start: every averaging is of models, no gradient is averaged (so
// compression has nothing to compress).
bool averages_models_only(const RunConfig& config);

// The nodes the cluster has: cluster.groups' nodes, or the workers over cluster.gpus_per_node.
long long node_count(const RunConfig& config);

// The math mode the run's matrix products are charged in: a workload's (timing-only or proxy) in its
// precision's, the built-in networks' in compute.math.
MathMode charged_math(const RunConfig& config);

// What the configuration is for: a training run (dtsim run, sweep, validate), or `dtsim collective`, which
// times one collective of any kind and so takes an algorithm that does not implement allreduce.
enum class ConfigUse { Training, CollectiveCommand };

// Builds the typed configuration, each section read once by the module that owns it, then checks the rules
// that span sections (run_checks.hpp). Throws InputError at the key a user would change.
RunConfig make_run_config(const Scenario& scenario, ConfigUse use = ConfigUse::Training);

// run.name as the run's folder name (RunConfig::name): an InputError at the key when a name the user gave is not
// one plain file name; the default (the scenario file's stem) made safe. Read alone, before the rest of the
// configuration, by `dtsim run` to claim its folder first.
std::string run_name(const Scenario& scenario);

}  // namespace dtsim::sim
