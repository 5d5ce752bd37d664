// What a run costs: GPU-hours, the bill at the profiles' prices (low, middle and high end of each quoted
// range), energy from the GPUs' idle and busy power, and the time and cost to reach a target accuracy.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/config/run_config.hpp"
#include "sim/strategies/metrics.hpp"

namespace dtsim::sim {

// The GPU of each worker, in rank order: the [gpu] profile, or each node group's own.
std::vector<GpuSpec> gpu_of_each_worker(const RunConfig& config);

struct CostReport {
  double gpu_hours = 0.0;        // every GPU is held for the whole simulated run
  bool priced = false;           // every GPU has a price, in one currency
  std::string unpriced_reason;   // why not, when some GPU has a price ("" when none has one)
  std::string currency;
  std::vector<std::string> regions;
  double low = 0.0, mid = 0.0, high = 0.0;  // the bill at each end and the middle of the price ranges
  // Of which the network (fabric.price_*, per GPU-hour), when the fabric has a price in the GPUs' currency.
  bool network_priced = false;
  double network_low = 0.0, network_mid = 0.0, network_high = 0.0;
  bool energy_known = false;     // every GPU has idle and busy power
  double energy_joules = 0.0;    // busy power while computing, idle power otherwise

  nlohmann::json to_json() const;
};

// Prices the whole run: `seconds` of simulated time, with each worker's compute time from `time`.
CostReport price_run(const RunConfig& config, const std::vector<WorkerTime>& time, double seconds);

// The first evaluation point at or above `target` accuracy, or null when none reaches it (target 0: none).
const EvalPoint* first_reaching(const std::vector<EvalPoint>& points, double target);

}  // namespace dtsim::sim
