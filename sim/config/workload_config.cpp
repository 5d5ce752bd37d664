#include "sim/config/workload_config.hpp"

#include <cstdlib>

#include "models/workload/catalog.hpp"
#include "sim/config/choice.hpp"
#include "sim/config/run_config.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/scenario/key_builders.hpp"
#include "sim/scenario/key_origins.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

const models::NameTable<WorkloadPrecision>& workload_precision_table() {
  static const models::NameTable<WorkloadPrecision> t{
      {WorkloadPrecision::Bf16, "bf16"}, {WorkloadPrecision::Tf32, "tf32"}, {WorkloadPrecision::Fp32, "fp32"}};
  return t;
}

const models::NameTable<WorkloadOptimizer>& workload_optimizer_table() {
  static const models::NameTable<WorkloadOptimizer> t{{WorkloadOptimizer::Adam, "adam"},
                                                      {WorkloadOptimizer::SgdMomentum, "sgd-momentum"},
                                                      {WorkloadOptimizer::Sgd, "sgd"}};
  return t;
}

#ifndef DTSIM_SOURCE_WORKLOAD_DIR
#define DTSIM_SOURCE_WORKLOAD_DIR "models/workloads"
#endif

std::string default_workload_dir() {
  return folder_from_environment("DTSIM_WORKLOAD_DIR", DTSIM_SOURCE_WORKLOAD_DIR, "workload .json files");
}

models::Workload load_named_workload(const WorkloadConfig& w) {
  try {
    return models::find_workload(w.name, default_workload_dir());
  } catch (const models::WorkloadFileError& e) {
    throw InputError("", "", e.what());
  }
}

bool is_timing_only(const Scenario& s) { return !s.text("workload.name").empty() && !s.boolean("workload.proxy"); }

WorkloadConfig make_workload_config(const Scenario& s) {
  WorkloadConfig c;
  c.name = s.text("workload.name");
  // Without a workload there is nothing to charge: the key is then reported as having no effect
  // (ignored_keys.cpp) and the run is the small model's own.
  c.proxy = s.boolean("workload.proxy") && !c.name.empty();
  c.micro_batch = static_cast<int>(s.integer("workload.micro_batch"));
  c.checkpointing = s.boolean("workload.checkpointing");
  c.precision = choice_value(workload_precision_table(), s, "workload.precision");
  c.optimizer = choice_value(workload_optimizer_table(), s, "workload.optimizer");
  c.steps = static_cast<int>(s.integer("workload.steps"));
  return c;
}

models::MemorySetup workload_memory_setup(WorkloadPrecision precision, WorkloadOptimizer optimizer, int micro_batch,
                                          bool checkpointing, int gpus) {
  models::MemorySetup s;
  s.data_parallel = gpus;
  s.micro_batch = micro_batch;
  s.checkpointing = checkpointing;
  const double width = precision == WorkloadPrecision::Bf16 ? 2 : 4;  // tf32 keeps fp32 storage
  s.weight_bytes = s.gradient_bytes = s.activation_bytes = width;
  s.optimizer_bytes = optimizer == WorkloadOptimizer::Adam ? 8 : optimizer == WorkloadOptimizer::SgdMomentum ? 4 : 0;
  return s;
}

models::MemorySetup workload_memory_setup(const WorkloadConfig& w, int gpus, int zero_stage) {
  models::MemorySetup s = workload_memory_setup(w.precision, w.optimizer, w.micro_batch, w.checkpointing, gpus);
  s.zero_stage = zero_stage;
  return s;
}

models::MemorySetup workload_memory_setup(const RunConfig& c) {
  models::MemorySetup s = workload_memory_setup(c.workload, c.workers, c.strategy == Strategy::Sync ? c.sync.zero_stage : 0);
  s.optimizer_kernels = c.optimizer_kernels;
  return s;
}

models::MemoryBreakdown workload_memory_per_gpu(const RunConfig& c, const models::Workload& workload) {
  models::MemoryBreakdown m = models::memory_per_gpu(workload, workload_memory_setup(c));
  if (c.strategy == Strategy::AsyncPs) m.master_weights = m.optimizer = 0;
  return m;
}

void check_workload_shards(const RunConfig& c, const models::Workload& workload, const KeyOrigins& at) {
  if (c.strategy != Strategy::AsyncPs) return;
  const int layers = static_cast<int>(workload.gradient_ready_order().size());
  if (layers < c.ps.servers)
    at.fail("ps.servers",
            workload.name + " has " + std::to_string(layers) + " trained layers, too few for " +
                std::to_string(c.ps.servers) + " shards of whole layers",
            "use at most " + std::to_string(layers) + " shards");
}

MathMode workload_math(WorkloadPrecision precision) {
  switch (precision) {
    case WorkloadPrecision::Bf16: return MathMode::Bf16;
    case WorkloadPrecision::Tf32: return MathMode::Tf32;
    case WorkloadPrecision::Fp32: return MathMode::Fp32;
  }
  return MathMode::Fp32;
}

bool read_by_workload_run(const std::string& key, Strategy strategy) {
  const std::string section = key.substr(0, key.find('.'));
  // [faults] is read to be refused (run_checks.cpp); [stragglers] and [background] apply to every strategy,
  // compute.matmul times every workload's products, compute.optimizer_kernels its optimizer step and
  // compute.host_dispatch and compute.cuda_graphs how every kernel is issued, and a
  // [framework] profile sets [sync] and [compute] keys (those are judged one by one).
  if (section == "cluster" || section == "fabric" || section == "gpu" || section == "network" ||
      section == "collective" || section == "stragglers" || section == "background" || section == "faults" ||
      section == "framework" || key == "run.name" || key == "training.strategy" || key == "output.links" ||
      key == "compute.matmul" || key == "compute.optimizer_kernels" || key == "compute.host_dispatch" ||
      key == "compute.cuda_graphs")
    return true;
  const auto among = [&](std::initializer_list<const char*> keys) {
    for (const char* k : keys)
      if (key == k) return true;
    return false;
  };
  switch (strategy) {
    case Strategy::Sync:
      return section == "workload" ||
             among({"sync.bucket_size", "sync.overlap", "sync.zero_stage", "sync.prefetch_units",
                     "sync.accumulation_steps"});
    case Strategy::AsyncPs:
      return section == "workload" || among({"ps.servers", "ps.gradients_per_update", "ps.staleness_bound"});
    case Strategy::Federated:
      return (section == "workload" && key != "workload.steps") ||
             among({"fl.algorithm", "fl.rounds", "fl.clients_per_round", "fl.sampling", "fl.local_steps",
                    "fl.local_steps_by_client", "fl.overcommit", "fl.straggler_fraction", "fl.straggler_policy",
                    "fl.availability", "fl.availability_trace", "fl.deadline", "fl.secure_aggregation",
                    "fl.secagg_key_bytes", "fl.secagg_mask_rate", "fl.secagg_key_agreement_time",
                    "fl.secagg_field_op_time"});
    case Strategy::Local:
      return section == "workload" || among({"local.local_steps", "local.sync_until_step"});
  }
  return false;
}

// ---- keys ------------------------------------------------------------------------------------------------
using namespace key_builders;

void add_workload_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      text("workload.name", "",
           "A catalog workload (dtsim workload lists them) or a workload .json file: the run is timing-only "
           "(any strategy), with no numerics, unless workload.proxy is set",
           true),
      boolean("workload.proxy", "false",
              "Proxy mode: train the scenario's built-in model for real (any strategy) while compute time and "
              "gradient or model traffic are charged as the named workload's"),
      integer("workload.micro_batch", "1", between(1, 1 << 20), "Samples (images or sequences) per GPU and step"),
      boolean("workload.checkpointing", "false",
              "Activation checkpointing: keep each block's input and recompute the block in the backward pass"),
      choice("workload.precision", "bf16", workload_precision_table().names(),
             "bf16 = bf16 storage, fp32 master weights, products at the BF16 peak; tf32 = fp32 storage, products "
             "at the TF32 peak; fp32 = fp32 throughout"),
      choice("workload.optimizer", "adam", workload_optimizer_table().names(),
             "Optimizer state per trained weight: adam = two fp32 moments, sgd-momentum = one, sgd = none"),
      integer("workload.steps", "10", between(2, 100000),
              "Steps simulated; the step time is their mean after the first (which fills the bucket pipeline)"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
