// `dtsim workload NAME --simulate`: timing-only synchronous data parallelism of a catalog workload on a
// simulated cluster (sim/strategies/timing/sync_timing.hpp), with the compute of each layer from the
// roofline at the GPU profile's efficiency and the cluster, fabric and collective from scenario keys.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/workload/compute_time.hpp"
#include "models/workload/workload.hpp"
#include "sim/config/hardware_config.hpp"
#include "sim/config/run_config.hpp"
#include "sim/strategies/timing/sync_timing.hpp"

namespace dtsim::sim {

// A step is sync's step, async-ps's global batch's worth of gradients (one per worker) or a federated round.
struct SimulatedSteps {
  TimingOutcome timing;
  Strategy strategy = Strategy::Sync;
  std::string platform;     // the cluster in words
  std::string collective;   // the bucket allreduce (the parameter server, the federated server) in words
  int workers = 0;
  int busy_gpus = 0;        // the GPUs that compute in a step: every worker, or a federated round's K clients
  double samples_per_step = 0;  // sync, async-ps: micro-batch × workers (× accumulation); federated: the kept local steps' samples
  int micro_batches = 1;        // sync: micro-batches accumulated per step (sync.accumulation_steps)
  double step_s = 0;        // mean step time, the first step (plan building, pipeline fill) excluded when possible
  double end_s = 0;         // when the last step (and, for async-ps, every shard's last update) had ended
  double one_gpu_step_s = 0;  // a step's micro-batches on one GPU, and its optimizer step: compute only
  nlohmann::ordered_json details;  // async-ps: shards and staleness; federated: rounds and reports
  GpuSpec gpu;
  FabricSpec fabric;
};

// `sets` are scenario keys (gpu.profile and cluster.workers among them); only cluster, fabric, gpu, network,
// collective keys and sync.bucket_size / sync.overlap may be given (anything else would be ignored: an
// InputError). `set_flags` names the flag behind each, for messages. `precision` is the job's (--precision):
// it picks the rate products reach under compute.matmul = tiles.
SimulatedSteps simulate_workload_steps(const models::Workload& workload, const models::MemorySetup& setup,
                                       WorkloadPrecision precision, const std::vector<std::string>& sets,
                                       const std::vector<std::string>& set_flags, int steps);

// The same on the cluster, hardware, collective and strategy of `config` (a workload scenario's).
// Its rates are those of config's GPU as a run charges them (run_device_rates).
SimulatedSteps simulate_workload_steps(const models::Workload& workload, const models::MemorySetup& setup,
                                       const RunConfig& config, int steps);

// The simulated steps and what follows from them: throughput, scaling against one GPU, utilisation, and
// the cost and energy of a billion tokens (or a million samples) at the profile's price and power.
struct SimulationSummary {
  SimulatedSteps sim;
  double samples_per_second = 0, tokens_per_second = 0, mfu = 0, scaling = 0;
  std::string unit;          // "billion tokens" or "million samples"
  double seconds_per_unit = 0;
  double cost_low = 0, cost_high = 0;  // per unit, 0 without a price
  double energy_kwh = 0;               // per unit, 0 without a power figure
  double busy_share = 0;               // of a step, the computing GPUs' compute (busy power; the rest idle)
};

SimulationSummary summarize_simulation(const models::Workload& workload, const models::MemorySetup& setup,
                                       WorkloadPrecision precision, const models::DeviceRates& rates_at_peak,
                                       const std::vector<std::string>& sets, const std::vector<std::string>& set_flags,
                                       int steps);
SimulationSummary summarize_steps(const models::Workload& workload, const models::MemorySetup& setup,
                                  const models::DeviceRates& rates_at_peak, const SimulatedSteps& steps);
// The lines `dtsim workload --simulate` and a workload scenario's run print; `fits`: whether the job fits in GPU
// memory (a warning line when it does not).
std::string simulation_text(const models::Workload& workload, const SimulationSummary& summary, int steps, bool fits);
nlohmann::ordered_json simulation_json(const SimulationSummary& summary, int steps);

}  // namespace dtsim::sim
