// Dragonfly: SimGrid's DragonflyZone, one chassis per group (see plan_dragonfly): nodes hang off routers,
// the routers of a group are all linked to each other, and groups are linked pairwise (the link to group j
// leaves from router j). Minimal routing: local, [to the router wired to the target group], global,
// [to the target router], local, so a route crosses at most 4 routers.
#include "sim/world/topology/build.hpp"

namespace dtsim::sim::topology {

Fabric build_dragonfly(PlatformBuild& b, const sg4::NetZone* parent, const std::string& name,
                       const FabricMembers& members) {
  Fabric out;
  out.ports = ports_in_node_order(b.nodes(), members);
  const DragonflyGeometry g = plan_dragonfly(b.cluster().dragonfly, static_cast<int>(out.ports.size()));
  const auto node = [&](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long position) {
    return b.attach(zone, out.ports[position], name);
  };
  const auto u = [](int v) { return static_cast<unsigned>(v); };
  const sg4::DragonflyParams params({u(g.groups), u(g.global_links)}, {u(g.chassis), u(g.chassis_links)},
                                    {u(g.routers), u(g.router_links)}, u(g.nodes_per_router));
  // Router-to-router links carry a whole switch; the node-to-router links get half of one (finish()).
  out.zone = sg4::create_dragonfly_zone(name, parent, params, sg4::ClusterCallbacks(node), b.fabric().bandwidth,
                                        b.switch_link_latency(), sg4::Link::SharingPolicy::SPLITDUPLEX);
  out.zone->seal();
  out.zone_made_ports = true;
  out.set_port_latency = true;
  out.description = g.describe();
  return out;
}

}  // namespace dtsim::sim::topology
