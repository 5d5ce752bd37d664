#include "platform.hpp"

#include <simgrid/kernel/resource/NetworkModelIntf.hpp>

#include <string>

namespace dtsim::sim {

std::unique_ptr<sg4::Engine> create_engine(const NetworkSettings& settings) {
  // SimGrid reads its configuration from argv; these strings must outlive the engine's parsing only.
  static std::vector<std::string> args;
  args = {"dtsim",
          "--log=root.thres:warning",  // keep SimGrid's per-setting INFO lines out of dtsim's output
          "--cfg=network/model:" + std::string(settings.model == "cm02" ? "CM02" : settings.model),
          std::string("--cfg=network/crosstraffic:") + (settings.crosstraffic ? "1" : "0")};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  return std::make_unique<sg4::Engine>(&argc, argv.data());
}

Platform build_star(int workers, double host_speed, const FabricSpec& fabric, int servers) {
  Platform p;
  auto* zone = sg4::create_star_zone("cluster");
  // Half the switch traversal on each of the two links of a route puts it exactly once on every path.
  const double per_link_latency = fabric.link_latency + fabric.switch_latency / 2.0;
  const auto attach = [&](const std::string& name, double speed) {
    sg4::Host* host = zone->create_host(name, speed);
    sg4::SplitDuplexLink* link = zone->create_split_duplex_link("nic-" + name, fabric.bandwidth);
    link->set_latency(per_link_latency);
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link, sg4::LinkInRoute::Direction::UP}},
                    /*symmetrical=*/true);
    return std::make_pair(host, static_cast<sg4::Link*>(link));
  };
  for (int i = 0; i < workers; ++i) {
    const auto [host, link] = attach("worker" + std::to_string(i), host_speed);
    p.workers.push_back(host);
    p.worker_links.push_back(link);
    p.node_of_worker.push_back(i);
    p.workers_of_node.push_back({i});
  }
  for (int i = 0; i < servers; ++i) p.servers.push_back(attach("server" + std::to_string(i), host_speed).first);
  zone->seal();
  p.description = "star, " + std::to_string(workers) + " × 1 GPU";
  return p;
}

Platform build_platform(sg4::Engine& engine, const RunConfig& config, int servers) {
  Platform p = build_star(config.workers, config.gpu.sustained(config.math), config.fabric, servers);
  install_fabric_calibration(engine, config.fabric);
  return p;
}

void install_fabric_calibration(sg4::Engine& engine, const FabricSpec& fabric) {
  const double efficiency = fabric.efficiency;
  auto* model = engine.get_netzone_root()->get_network_model();
  model->set_bw_factor_cb([efficiency](double, const sg4::Host*, const sg4::Host*, const std::vector<sg4::Link*>&,
                                       const std::unordered_set<sg4::NetZone*>&) { return efficiency; });
}

double route_latency(sg4::Host* from, sg4::Host* to) {
  std::vector<sg4::Link*> links;
  double latency = 0.0;
  from->route_to(to, links, &latency);
  return latency;
}

}  // namespace dtsim::sim
