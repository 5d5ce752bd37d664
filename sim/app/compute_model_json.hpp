// summary.json's "compute_model": which model timed the run's matrix products and with what inputs, so that a
// reader can tell an end-to-end efficiency (compute.matmul = roofline, gpu.efficiency) from products timed by
// their shapes (tiles, at a kernel-benchmark rate) without reopening the profile.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/config/run_config.hpp"

namespace dtsim::sim {

// `math` is the math the products run in: compute.math for a run with numerics, the workload's precision for a
// timing-only run. One entry per GPU kind: the [gpu] section's, or each node group's.
nlohmann::ordered_json compute_model_json(const RunConfig& config, MathMode math);

}  // namespace dtsim::sim
