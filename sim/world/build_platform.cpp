#include "sim/world/build_platform.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/config/topology_registry.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/world/topology/build.hpp"
#include "sim/world/topology/registry.hpp"

namespace dtsim::sim {

NetworkSettings network_settings(const PlatformSpec& spec) {
  NetworkSettings settings;
  settings.model = spec.network_model;
  settings.crosstraffic = spec.crosstraffic;
  settings.ranks = spec.workers;
  double window = 0.0;
  const auto consider = [&window](const FabricSpec& fabric) {
    if (fabric.window_limited() && fabric.tcp_window > 0)
      window = window > 0 ? std::min(window, fabric.tcp_window) : fabric.tcp_window;
  };
  consider(spec.fabric);
  if (topology_descriptor(spec.layout.topology).sites) consider(spec.layout.wan);
  settings.tcp_window = window > 0 ? window : 1e18;
  return settings;
}

Platform build_star(int workers, double host_speed, const FabricSpec& fabric, int servers) {
  PlatformSpec spec;
  spec.workers = workers;
  spec.gpu.peak_fp32 = host_speed;  // sustained at efficiency 1, in fp32: exactly host_speed
  spec.gpu.efficiency = 1.0;
  spec.math = MathMode::Fp32;
  spec.fabric = fabric;
  topology::PlatformBuild build(spec, servers);
  const topology::Fabric star = topology::build_star_fabric(build, nullptr, "cluster", build.everyone());
  return build.finish({star}, star.description);
}

Platform build_platform(sg4::Engine& engine, const PlatformSpec& spec, int servers) {
  using namespace topology;
  try {
    PlatformBuild build(spec, servers);
    const BuiltFabrics built = build_fabrics(build);
    Platform platform = build.finish(built.fabrics, built.description);
    install_calibration(engine, build.shared_calibration(), spec.network_model);
    return platform;
  } catch (const ShapeError& e) {
    // Only the servers a strategy asks for can get here: the scenario's own shape was checked on loading.
    throw InputError(spec.scenario_path.empty() ? std::string("platform") : spec.scenario_path, e.key(), e.what(),
                     e.hint());
  }
}

void install_fabric_calibration(sg4::Engine& engine, const FabricSpec& fabric) {
  topology::install_calibration(engine, std::make_shared<topology::LinkCalibration>(fabric), NetworkModel::Cm02);
}

}  // namespace dtsim::sim
