// [workload]: a timing-only run of a catalog workload (models/workloads/: ResNet-50, BERT-large, GPT-2 XL,
// LLaMA-7B and its LoRA variant, Llama 2 70B). With workload.name set, `dtsim run` computes no gradients: it
// simulates synchronous data-parallel steps whose compute is the workload's per-layer roofline on the
// scenario's GPU and whose gradient buckets are the workload's trained weights (docs/workloads.md).
#pragma once

#include <string>

#include "models/name_table.hpp"
#include "models/workload/memory.hpp"
#include "models/workload/workload.hpp"
#include "sim/config/hardware_config.hpp"
#include "sim/config/strategy.hpp"

namespace dtsim::sim {

class Scenario;

// The training precision of a workload: bf16 storage with fp32 master weights and products at the BF16 tensor
// peak; fp32 storage with products at the TF32 tensor peak; or fp32 throughout.
enum class WorkloadPrecision { Bf16, Tf32, Fp32 };
const models::NameTable<WorkloadPrecision>& workload_precision_table();
// The optimizer state per trained weight: Adam's two fp32 moments, SGD's momentum, or nothing.
enum class WorkloadOptimizer { Adam, SgdMomentum, Sgd };
const models::NameTable<WorkloadOptimizer>& workload_optimizer_table();

struct WorkloadConfig {
  std::string name;  // a catalog name or a .json path; empty: a run with numerics
  // Proxy mode: the scenario's built-in model trains for real while every worker's compute and gradient
  // traffic are charged as this workload's (its per-layer roofline, its trained weights in buckets).
  bool proxy = false;
  int micro_batch = 1;
  bool checkpointing = false;
  WorkloadPrecision precision = WorkloadPrecision::Bf16;
  WorkloadOptimizer optimizer = WorkloadOptimizer::Adam;
  int steps = 10;

  bool active() const { return !name.empty(); }
  bool timing_only() const { return active() && !proxy; }
};

WorkloadConfig make_workload_config(const Scenario& scenario);

// The catalog folder: $DTSIM_WORKLOAD_DIR, else the source tree's models/workloads/.
std::string default_workload_dir();
// The catalog entry workload.name names (check_run_config has checked that its file exists); a broken file
// is an InputError at its own line and field.
models::Workload load_named_workload(const WorkloadConfig& workload);
// Whether a scenario's workload.name asks for a timing-only run (set, and workload.proxy off).
bool is_timing_only(const Scenario& scenario);

// What one GPU of `gpus` data-parallel replicas holds and moves for a workload trained this way (ZeRO stage 0).
models::MemorySetup workload_memory_setup(WorkloadPrecision precision, WorkloadOptimizer optimizer, int micro_batch,
                                          bool checkpointing, int gpus);
// The math mode whose peak the workload's matrix products run at.
MathMode workload_math(WorkloadPrecision precision);

// The setup a workload is timed with in this run: workload_memory_setup of its keys, the workers, ZeRO's stage.
models::MemorySetup workload_memory_setup(const WorkloadConfig& workload, int gpus, int zero_stage);

struct RunConfig;
// The setup a run charges `config.workload` with (ZeRO's stage for sync only), and what one worker's GPU then
// holds: an asynchronous parameter server's workers keep no master weights or optimizer state (the shards do).
models::MemorySetup workload_memory_setup(const RunConfig& config);
models::MemoryBreakdown workload_memory_per_gpu(const RunConfig& config, const models::Workload& workload);

class KeyOrigins;
// An async-ps run of a workload (timing-only or proxy) gives each shard whole trained layers of it: refused
// at ps.servers when it has fewer trained layers than shards. Nothing for the other strategies.
void check_workload_shards(const RunConfig& config, const models::Workload& workload, const KeyOrigins& at);

// Whether a timing-only run of a workload with `strategy` reads `key`: the cluster and its hardware, the
// network model, the collective, [stragglers], [background] ([faults], to refuse it), the run's name,
// training.strategy, compute.matmul and [workload] (federated learning: not
// workload.steps, its length is fl.rounds); for sync DDP's buckets and ZeRO's stage; for async-ps the shards
// and n-softsync's k; for local SGD its H (and sync_until_step, to refuse it); for federated the keys that
// plan a round (who takes part, how much work
// they do, what travels), not the ones that only change the values.
bool read_by_workload_run(const std::string& key, Strategy strategy);

}  // namespace dtsim::sim
