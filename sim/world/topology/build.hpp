// What every topology builder shares while one platform is built: the node plan, the Platform being
// filled, the link calibration, and the nodes themselves (GPU hosts, the switch that joins them, their NICs).
#pragma once

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u.hpp>

#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sim/config/platform_spec.hpp"
#include "sim/world/platform.hpp"
#include "sim/world/topology/calibration.hpp"
#include "sim/config/cluster_layout.hpp"

namespace dtsim::sim::topology {

using simgrid::kernel::routing::NetPoint;

// A netpoint and its gateway, as SimGrid's ClusterCallbacks return them (no gateway for a bare host).
using Attachment = std::pair<NetPoint*, NetPoint*>;

// One fabric built inside the platform: its zone, its ports in SimGrid's order and whether its ports'
// latencies are to be set once the platform is sealed (cluster zones; see set_port_latencies).
struct Fabric {
  sg4::NetZone* zone = nullptr;
  std::vector<Port> ports;
  bool zone_made_ports = false;  // the cluster zone created the ports' links (not dtsim)
  bool set_port_latency = false;  // and they get port_latency() (fat-tree, dragonfly; not torus hops)
  // NICs bonded into each of the zone's links (a fat-tree of nodes whose GPUs own several NICs each); the
  // ports of servers and borders get one NIC's bandwidth back in finish().
  int link_width = 1;
  std::string description;
};

class PlatformBuild {
 public:
  // Plans the nodes and checks the shapes with `servers` extra hosts (throws ShapeError).
  PlatformBuild(const PlatformSpec& spec, int servers);

  const ClusterConfig& cluster() const { return spec_.layout; }
  const FabricSpec& fabric() const { return spec_.fabric; }
  const std::vector<NodePlan>& nodes() const { return nodes_; }
  int servers() const { return servers_; }
  // Every node and every server: the members of a fabric that holds the whole cluster.
  FabricMembers everyone() const;

  // Whether ports are zones. SimGrid's cluster zones route wrongly between a leaf that is a host and one
  // that is a zone (they mix up the ids of the two), so as soon as one node needs a zone (several GPUs or
  // NICs) every port is one: a lone host is wrapped in a zone with no link between it and its gateway.
  bool ports_are_zones() const { return ports_are_zones_; }

  // Creates what sits at `port` inside the fabric zone `parent`: a GPU host, a node's NIC slice (a star
  // zone holding the GPUs that use that port, each with its port into the node's switch, and the NIC as
  // gateway, reached through the slice's PCIe switch link if there is one), a server, the border host of
  // `site`, or for an idle port a router nothing routes to.
  Attachment attach(sg4::NetZone* parent, const Port& port, const std::string& site);

  // The bandwidth of the fabric link at `port`: the fabric's, times the NICs bonded into a node's port.
  double port_bandwidth(const Port& port) const;

  // The host behind a port once it is attached: a node's first GPU on that port, or the server; nullptr
  // for an idle port and for a border (border_of gives it).
  sg4::Host* host_behind(const Port& port) const;
  sg4::Host* border_of(const std::string& site) const;

  // Joins the NIC slices of every multi-NIC node among `nodes` through the node's switch: bypass routes of
  // `fabric_zone`, their common parent, so that traffic between two GPUs of a node never leaves it.
  void add_intra_node_routes(sg4::NetZone* fabric_zone, const std::vector<int>& nodes);

  void set_worker_link(int rank, sg4::Link* link) { platform_.worker_links[static_cast<size_t>(rank)] = link; }

  // Links of the platform that dtsim created (not the cluster zones).
  void own(const sg4::Link* link) { own_links_.insert(link); }
  void own(const sg4::SplitDuplexLink* link);
  LinkCalibration& calibration() { return *calibration_; }

  // Sets the fabrics' port latencies, fills each worker's first link and hands the Platform over. Call
  // once the root zone is sealed; install the calibration after it (install_calibration).
  Platform finish(const std::vector<Fabric>& fabrics, const std::string& topology_description);
  std::shared_ptr<const LinkCalibration> shared_calibration() const { return calibration_; }

  // Latency of a link between a port and a switch (half a switch) and between two switches (a whole one).
  double port_latency() const { return fabric().link_latency + fabric().switch_latency / 2.0; }
  double switch_link_latency() const { return fabric().link_latency + fabric().switch_latency; }

 private:
  struct NodeParts {
    std::vector<sg4::NetZone*> slices;   // one per port (NIC, or bonded NICs of a GPU)
    std::vector<NetPoint*> switch_ports;  // per slice: where bypass routes enter it
    sg4::Link* crossbar = nullptr;        // the node's switch, on routes between slices
    std::vector<sg4::SplitDuplexLink*> pcie;  // per PCIe switch: its link, on its slices' routes to their NIC
  };

  Attachment wrap_host(sg4::NetZone* parent, const std::string& zone_name, const std::string& host_name, double speed,
                       sg4::Host** host);
  Attachment attach_nic(sg4::NetZone* parent, int node, int port);
  sg4::SplitDuplexLink* pcie_switch_of(sg4::NetZone* parent, int node, int port);
  std::string describe_nodes() const;

  const PlatformSpec& spec_;
  int servers_;
  std::vector<NodePlan> nodes_;
  bool ports_are_zones_ = false;
  int idle_ports_ = 0;
  Platform platform_;
  std::vector<NodeParts> parts_;
  std::vector<std::pair<std::string, sg4::Host*>> borders_;
  std::unordered_set<const sg4::Link*> own_links_;
  std::shared_ptr<LinkCalibration> calibration_;
};

// The topology builders (one file each), found through the registry (registry.hpp). Each creates its zone
// under `parent` (nullptr: the root), named `name`, joining `members`, and seals it.
Fabric build_star_fabric(PlatformBuild& b, const sg4::NetZone* parent, const std::string& name,
                         const FabricMembers& members);
Fabric build_fat_tree(PlatformBuild& b, const sg4::NetZone* parent, const std::string& name,
                      const FabricMembers& members);
Fabric build_torus(PlatformBuild& b, const sg4::NetZone* parent, const std::string& name, const FabricMembers& members);
Fabric build_dragonfly(PlatformBuild& b, const sg4::NetZone* parent, const std::string& name,
                       const FabricMembers& members);

// The fabrics of a whole platform and the description of its topology.
struct BuiltFabrics {
  std::vector<Fabric> fabrics;
  std::string description;
};
// Two sites (of cluster.site_topology) under a root zone, joined by the WAN link between their border hosts.
BuiltFabrics build_two_sites(PlatformBuild& b);

}  // namespace dtsim::sim::topology
