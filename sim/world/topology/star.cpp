// Star: every port on one non-blocking switch, a full-duplex link per port, so a route between two ports is
// port → switch → port and costs 2·link_latency + switch_latency. A GPU that owns several NICs has them bonded
// into one port of their summed bandwidth.
#include "sim/world/topology/build.hpp"

namespace dtsim::sim::topology {

Fabric build_star_fabric(PlatformBuild& b, const sg4::NetZone* parent, const std::string& name,
                         const FabricMembers& members) {
  Fabric out;
  out.zone = sg4::create_star_zone(name);
  if (parent) out.zone->set_parent(parent);
  out.ports = ports_in_node_order(b.nodes(), members);
  for (const Port& port : out.ports) {
    const auto [netpoint, gateway] = b.attach(out.zone, port, name);
    // Named after the host behind a bare host's port, after the NIC (the gateway) behind a node's.
    sg4::SplitDuplexLink* link =
        out.zone->create_split_duplex_link("nic-" + (gateway ? gateway : netpoint)->get_name(), b.port_bandwidth(port));
    link->set_latency(b.port_latency());
    out.zone->add_route(netpoint, nullptr, gateway, nullptr, {{link, sg4::LinkInRoute::Direction::UP}}, true);
    if (port.kind == Port::Kind::Nic && !b.ports_are_zones()) b.set_worker_link(b.nodes()[port.index].first_rank, link);
  }
  b.add_intra_node_routes(out.zone, members.nodes);
  out.zone->seal();
  out.description = "star";
  return out;
}

}  // namespace dtsim::sim::topology
