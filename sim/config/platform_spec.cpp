#include "sim/config/platform_spec.hpp"

#include "sim/config/run_config.hpp"

namespace dtsim::sim {

PlatformSpec platform_spec(const RunConfig& config) {
  PlatformSpec spec;
  spec.workers = config.workers;
  spec.gpu = config.gpu;
  spec.math = config.math;
  spec.fabric = config.fabric;
  spec.layout = config.layout;
  spec.network_model = config.network_model;
  spec.crosstraffic = config.crosstraffic;
  spec.scenario_path = config.scenario_path;
  return spec;
}

}  // namespace dtsim::sim
