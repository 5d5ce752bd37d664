// Calibration of the built platform: the achievable fraction of nominal bandwidth of every link's fabric
// (applied to each flow through SimGrid's bandwidth-factor callback), and the latencies of the links that
// SimGrid's cluster zones create with one latency for all.
#pragma once

#include <simgrid/s4u.hpp>

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sim/config/hardware_config.hpp"

namespace dtsim::sim::topology {

namespace sg4 = simgrid::s4u;

// Which fabric every link belongs to, as its efficiency. Links never added (those the cluster zones create)
// belong to the main inter-node fabric.
class LinkCalibration {
 public:
  explicit LinkCalibration(const FabricSpec& main) : main_efficiency_(main.efficiency) {}

  void add(const sg4::Link* link, const FabricSpec& fabric);
  void add(const sg4::SplitDuplexLink* link, const FabricSpec& fabric);  // both directions

  double efficiency(const sg4::Link* link) const;
  double main_efficiency() const { return main_efficiency_; }
  // True when every link has the main fabric's efficiency (one factor for every flow).
  bool uniform() const;
  // The bandwidth factor of a flow over `route` (see calibration.cpp for why this one).
  double factor(const std::vector<sg4::Link*>& route) const;

 private:
  double main_efficiency_;
  std::unordered_map<const sg4::Link*, double> efficiency_;
};

// Installs `calibration` as the network model's bandwidth-factor callback; for models other than CM02
// (whose latency factor is already 1), a latency-factor callback of 1 too, so that latencies are the
// profiles' and nothing else.
void install_calibration(sg4::Engine& engine, std::shared_ptr<const LinkCalibration> calibration,
                         NetworkModel network_model);

// The port of one endpoint (a host, a node, a server) into a cluster zone, in both directions.
struct PortLinks {
  sg4::Link* up = nullptr;
  sg4::Link* down = nullptr;
};

// Finds the port of each endpoint into a cluster zone, which SimGrid creates without telling: on the route
// from endpoint i to endpoint i + 1, the first link not in `own_links` is i's port up and the last one
// i + 1's port down. `endpoint_hosts` holds one host behind each endpoint. Null links when there is no
// second endpoint.
std::vector<PortLinks> find_ports(const std::vector<sg4::Host*>& endpoint_hosts,
                                  const std::unordered_set<const sg4::Link*>& own_links);

// Cluster zones give all their links one latency, but dtsim charges link_latency per link and
// switch_latency per switch a route crosses: h links and h − 1 switches. Built with link + switch on every
// link, a zone's routes are exact once each endpoint's port carries link + switch/2: every route starts and
// ends on a port, and the two half switches make up the one switch too many.
void set_port_latencies(const std::vector<PortLinks>& ports, double port_latency);

}  // namespace dtsim::sim::topology
