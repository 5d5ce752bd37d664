// Fat-tree: SimGrid's FatTreeZone (a parallel-ports generalized fat-tree with d-mod-k routing), its leaves
// the ports planned by plan_fat_tree (NIC slices of nodes, servers, a site's border, idle ports). Every link
// has the fabric's bandwidth (times the NICs bonded into a port where each GPU owns several; a server's or a
// border's port is set back to one NIC's); oversubscription comes from fewer uplinks than ports per leaf switch.
#include "sim/world/topology/build.hpp"

namespace dtsim::sim::topology {

Fabric build_fat_tree(PlatformBuild& b, const sg4::NetZone* parent, const std::string& name,
                      const FabricMembers& members) {
  const FatTreeGeometry geometry = plan_fat_tree(b.nodes(), members, b.cluster().fat_tree, b.cluster().rail_optimized);
  Fabric out;
  out.ports = geometry.ports;
  const auto leaf = [&](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long position) {
    return b.attach(zone, out.ports[position], name);
  };
  const std::vector<unsigned> one_link_each(static_cast<size_t>(geometry.levels), 1u);
  // Links between switches carry a whole switch; the ports get half of one at the end (finish()).
  out.zone = sg4::create_fatTree_zone(name, parent, sg4::FatTreeParams(geometry.levels, geometry.down(), geometry.up(), one_link_each),
                                      sg4::ClusterCallbacks(leaf), b.fabric().bandwidth * geometry.port_width, b.switch_link_latency(),
                                      sg4::Link::SharingPolicy::SPLITDUPLEX);
  b.add_intra_node_routes(out.zone, members.nodes);
  out.zone->seal();
  out.zone_made_ports = true;
  out.set_port_latency = true;
  out.link_width = geometry.port_width;
  out.description = geometry.describe();
  return out;
}

}  // namespace dtsim::sim::topology
