// Timing-only runs of a workload with the strategies other than sync: local SGD (sim/strategies/timing/
// local_timing.hpp), the asynchronous parameter server (ps_timing.hpp) and federated learning (fl_timing.hpp),
// their specs built from the
// workload's per-layer roofline as a proxy run's ComputeCost builds them, so that both charge the same.
#pragma once

#include "models/workload/compute_time.hpp"
#include "models/workload/workload.hpp"
#include "sim/app/workload_timing.hpp"
#include "sim/config/run_config.hpp"
#include "sim/world/platform.hpp"
#include "sim/world/stragglers.hpp"

namespace dtsim::sim {

// Fills `out` (whose workers, GPU, fabric and one-GPU step are set) with `steps` global batches' worth of
// gradients through cfg.ps.servers shards; `rates` are the sustained ones, `speed` the workers' FLOP rate,
// `stragglers` the per-step slowdowns of [stragglers] (null: none).
void simulate_ps_steps(SimulatedSteps& out, const models::Workload& workload, const models::MemorySetup& setup,
                       const models::DeviceRates& rates, const RunConfig& cfg, const Platform& platform, double speed,
                       const StragglerModel* stragglers, int steps);

// The same with `steps` steps of local SGD averaging every cfg.sync.local_steps (at least 2) steps, the model
// averages built by `make`.
void simulate_local_sgd_steps(SimulatedSteps& out, const models::Workload& workload, const models::MemorySetup& setup,
                              const models::DeviceRates& rates, const RunConfig& cfg, const Platform& platform,
                              double speed, const StragglerModel* stragglers, int steps, const MakeCollective& make);

// The same with cfg.fl.rounds rounds of federated learning.
void simulate_fl_rounds(SimulatedSteps& out, const models::Workload& workload, const models::MemorySetup& setup,
                        const models::DeviceRates& rates, const RunConfig& cfg, const Platform& platform, double speed,
                        const StragglerModel* stragglers);

}  // namespace dtsim::sim
