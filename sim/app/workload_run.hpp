// `dtsim run` / `dtsim check` on a scenario that names a catalog workload (workload.name, without
// workload.proxy; is_timing_only in config/workload_config.hpp): a timing-only run of
// synchronous data parallelism (workload_timing.hpp) on the scenario's cluster, with no numerics. It writes
// summary.json (mode "timing-only": step time, throughput, scaling, utilisation, memory per GPU, cost and
// energy per billion tokens or million samples) and metrics.csv (when each step ended).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/workload/memory.hpp"
#include "models/workload/workload.hpp"
#include "sim/config/ignored_keys.hpp"
#include "sim/config/run_config.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

struct WorkloadRun {
  RunConfig config;
  models::Workload workload;
  models::MemorySetup setup;
  models::MemoryBreakdown memory;  // per GPU
  bool fits = true;                // memory.total() <= gpu.memory (a timing-only run warns, it does not refuse)
  std::vector<IgnoredKey> ignored_keys;
  std::vector<IgnoredKey> warnings;  // keys that act, but likely not as meant (key_warnings.hpp)
};

// Reads and checks everything (InputError at the key, a workload file's own errors at its line).
WorkloadRun prepare_workload_run(const Scenario& scenario);
// "llama-7b on 64 × A100-SXM4-80GB, micro-batch 4, bf16, adam, timing only": what `dtsim check` prints.
std::string describe_workload_run(const WorkloadRun& run);

// Simulates the steps and writes summary.json and metrics.csv into `staging` (RunFolder's); returns the
// lines to print. `wall_time` gives the wall seconds since the command started.
std::string run_workload(const WorkloadRun& run, const std::string& staging, const std::function<double()>& wall_time);

}  // namespace dtsim::sim
