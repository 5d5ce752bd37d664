// What building the simulated cluster reads from a run's configuration, and nothing else: the platform
// builders (sim/world/build_platform.hpp) take this rather than the whole RunConfig.
#pragma once

#include <string>

#include "sim/config/cluster_config.hpp"
#include "sim/config/hardware_config.hpp"

namespace dtsim::sim {

struct RunConfig;

struct PlatformSpec {
  int workers = 1;
  GpuSpec gpu;
  MathMode math = MathMode::Fp32;  // the hosts' speed is the GPU's sustained rate in this mode
  FabricSpec fabric;
  ClusterConfig layout;                // topology, nodes, groups
  NetworkModel network_model = NetworkModel::Cm02;
  bool crosstraffic = false;
  std::string scenario_path;  // where errors point; empty: "platform"
};

PlatformSpec platform_spec(const RunConfig& config);

}  // namespace dtsim::sim
