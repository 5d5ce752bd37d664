#include "sim/world/platform.hpp"

#include <simgrid/kernel/resource/NetworkModelIntf.hpp>

#include <algorithm>
#include <string>

#include "sim/scenario/errors.hpp"
#include "sim/config/topology_registry.hpp"
#include "sim/world/topology/registry.hpp"

namespace dtsim::sim {

std::unique_ptr<sg4::Engine> create_engine(const NetworkSettings& settings) {
  // SimGrid reads its configuration from argv; these strings must outlive the engine's parsing only.
  static std::vector<std::string> args;
  const std::string model = settings.model == "cm02" ? "CM02" : settings.model == "ib" ? "IB" : settings.model;
  args = {"dtsim",
          "--log=root.thres:warning",  // keep SimGrid's per-setting INFO lines out of dtsim's output
          "--cfg=network/model:" + model,
          std::string("--cfg=network/crosstraffic:") + (settings.crosstraffic ? "1" : "0"),
          "--cfg=network/TCP-gamma:" + std::to_string(settings.tcp_window),
          // SimGrid 3.32's default lazy update of the sharing gives some flows more than their max-min share
          // when flows with different bottlenecks cross (README, "Collectives"); the full update is exact.
          "--cfg=network/optim:Full"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  return std::make_unique<sg4::Engine>(&argc, argv.data());
}

Platform worker_group(const Platform& platform, const std::vector<int>& ranks) {
  Platform g;
  g.servers = platform.servers;
  g.description = platform.description;
  std::vector<int> node_index(platform.workers_of_node.size(), -1);
  for (const int r : ranks) {
    const int node = platform.node_of_worker.at(r);
    if (node_index[node] < 0) {
      node_index[node] = static_cast<int>(g.workers_of_node.size());
      g.workers_of_node.emplace_back();
    }
    const int slot = static_cast<int>(g.workers.size());
    g.workers.push_back(platform.workers.at(r));
    g.worker_links.push_back(r < static_cast<int>(platform.worker_links.size()) ? platform.worker_links[r] : nullptr);
    g.node_of_worker.push_back(node_index[node]);
    g.workers_of_node[node_index[node]].push_back(slot);
  }
  return g;
}

NetworkSettings network_settings(const RunConfig& config) {
  NetworkSettings settings;
  settings.model = config.network_model;
  settings.crosstraffic = config.crosstraffic;
  double window = 0.0;
  const auto consider = [&window](const FabricSpec& fabric) {
    if (fabric.window_limited() && fabric.tcp_window > 0)
      window = window > 0 ? std::min(window, fabric.tcp_window) : fabric.tcp_window;
  };
  consider(config.fabric);
  if (topology_descriptor(config.layout.topology).sites) consider(config.layout.wan);
  settings.tcp_window = window > 0 ? window : 1e18;
  return settings;
}

Platform build_star(int workers, double host_speed, const FabricSpec& fabric, int servers) {
  RunConfig config;
  config.workers = workers;
  config.gpu.peak_fp32 = host_speed;  // sustained at efficiency 1, in fp32: exactly host_speed
  config.gpu.efficiency = 1.0;
  config.math = MathMode::Fp32;
  config.fabric = fabric;
  topology::PlatformBuild build(config, servers);
  const topology::Fabric star = topology::build_star_fabric(build, nullptr, "cluster", build.everyone());
  return build.finish({star}, star.description);
}

Platform build_platform(sg4::Engine& engine, const RunConfig& config, int servers) {
  using namespace topology;
  try {
    PlatformBuild build(config, servers);
    const BuiltFabrics built = build_fabrics(build);
    Platform platform = build.finish(built.fabrics, built.description);
    install_calibration(engine, build.shared_calibration(), config.network_model);
    return platform;
  } catch (const ShapeError& e) {
    // Only the servers a strategy asks for can get here: the scenario's own shape was checked on loading.
    throw InputError(config.scenario_path.empty() ? std::string("platform") : config.scenario_path, e.key(), e.what(),
                     e.hint());
  }
}

void install_fabric_calibration(sg4::Engine& engine, const FabricSpec& fabric) {
  topology::install_calibration(engine, std::make_shared<topology::LinkCalibration>(fabric), "cm02");
}

double route_latency(sg4::Host* from, sg4::Host* to) {
  std::vector<sg4::Link*> links;
  double latency = 0.0;
  from->route_to(to, links, &latency);
  return latency;
}

}  // namespace dtsim::sim
