#include "sim/world/topology/calibration.hpp"

#include <simgrid/kernel/resource/NetworkModelIntf.hpp>

#include <algorithm>
#include <limits>

namespace dtsim::sim::topology {

void LinkCalibration::add(const sg4::Link* link, const FabricSpec& fabric) { efficiency_[link] = fabric.efficiency; }

void LinkCalibration::add(const sg4::SplitDuplexLink* link, const FabricSpec& fabric) {
  add(link->get_link_up(), fabric);
  add(link->get_link_down(), fabric);
}

double LinkCalibration::efficiency(const sg4::Link* link) const {
  const auto it = efficiency_.find(link);
  return it == efficiency_.end() ? main_efficiency_ : it->second;
}

bool LinkCalibration::uniform() const {
  return std::all_of(efficiency_.begin(), efficiency_.end(),
                     [this](const auto& entry) { return entry.second == main_efficiency_; });
}

// Why not the smallest efficiency along the route: SimGrid bounds a flow by the smallest nominal bandwidth
// of its links and multiplies the rate it gets (its max-min share) by this factor. An uncontended flow must
// reach the smallest *achievable* bandwidth of its links, min(efficiency × bandwidth); the factor that does
// that is min(efficiency × bandwidth) / min(bandwidth). On one fabric it is that fabric's efficiency; when
// one fabric is the bottleneck it is the bottleneck's efficiency. The smallest efficiency would instead
// charge a GPU → NVLink → InfiniBand flow NVLink's overheads on InfiniBand's bandwidth although the NVLink
// hop, ten times faster, never limits it. Under contention the shares are taken of nominal capacities and
// scaled by the same factor, which is exact when the contended link is the route's slowest.
double LinkCalibration::factor(const std::vector<sg4::Link*>& route) const {
  if (route.empty()) return main_efficiency_;
  double slowest = std::numeric_limits<double>::infinity();
  double slowest_achievable = std::numeric_limits<double>::infinity();
  for (const sg4::Link* link : route) {
    const double bandwidth = link->get_bandwidth();
    slowest = std::min(slowest, bandwidth);
    slowest_achievable = std::min(slowest_achievable, efficiency(link) * bandwidth);
  }
  return slowest_achievable / slowest;
}

void install_calibration(sg4::Engine& engine, std::shared_ptr<const LinkCalibration> calibration,
                         NetworkModel network_model) {
  auto* model = engine.get_netzone_root()->get_network_model();
  if (calibration->uniform()) {
    // One fabric: a constant factor, bit for bit what a single-fabric platform always had.
    const double efficiency = calibration->main_efficiency();
    model->set_bw_factor_cb([efficiency](double, const sg4::Host*, const sg4::Host*, const std::vector<sg4::Link*>&,
                                         const std::unordered_set<sg4::NetZone*>&) { return efficiency; });
  } else {
    model->set_bw_factor_cb([calibration](double, const sg4::Host*, const sg4::Host*,
                                          const std::vector<sg4::Link*>& route,
                                          const std::unordered_set<sg4::NetZone*>&) { return calibration->factor(route); });
  }
  // The IB model derives from SMPI's, whose size-dependent latency factors (×11.6 for large messages) would
  // replace the fabric's measured latencies.
  if (network_model != NetworkModel::Cm02)
    model->set_lat_factor_cb([](double, const sg4::Host*, const sg4::Host*, const std::vector<sg4::Link*>&,
                                const std::unordered_set<sg4::NetZone*>&) { return 1.0; });
}

std::vector<PortLinks> find_ports(const std::vector<sg4::Host*>& endpoint_hosts,
                                  const std::unordered_set<const sg4::Link*>& own_links) {
  const size_t n = endpoint_hosts.size();
  std::vector<PortLinks> ports(n);
  if (n < 2) return ports;
  const auto is_zone_link = [&](const sg4::Link* link) { return own_links.count(link) == 0; };
  std::vector<sg4::Link*> route;
  for (size_t i = 0; i < n; ++i) {
    route.clear();
    endpoint_hosts[i]->route_to(endpoint_hosts[(i + 1) % n], route, nullptr);
    const auto first = std::find_if(route.begin(), route.end(), is_zone_link);
    if (first == route.end()) continue;
    ports[i].up = *first;
    ports[(i + 1) % n].down = *std::find_if(route.rbegin(), route.rend(), is_zone_link);
  }
  return ports;
}

void set_port_latencies(const std::vector<PortLinks>& ports, double port_latency) {
  for (const PortLinks& p : ports) {
    if (p.up) p.up->set_latency(port_latency);
    if (p.down) p.down->set_latency(port_latency);
  }
}

}  // namespace dtsim::sim::topology
