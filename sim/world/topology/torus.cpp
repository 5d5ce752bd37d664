// Torus: SimGrid's TorusZone, nodes linked to their neighbours along every dimension with wrap-around,
// routed dimension by dimension along the shorter way round. A direct network: each hop enters the next
// node's router, so every link carries link_latency + switch_latency and a route of h hops costs
// h·(link_latency + switch_latency).
#include "sim/world/topology/build.hpp"

namespace dtsim::sim::topology {

Fabric build_torus(PlatformBuild& b, const sg4::NetZone* parent, const std::string& name, const FabricMembers& members) {
  Fabric out;
  out.ports = ports_in_node_order(b.nodes(), members);
  const std::vector<int>& dims = b.cluster().torus_dims;
  check_torus(dims, static_cast<int>(out.ports.size()));
  const auto node = [&](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long position) {
    return b.attach(zone, out.ports[position], name);
  };
  out.zone = sg4::create_torus_zone(name, parent, std::vector<unsigned long>(dims.begin(), dims.end()),
                                    sg4::ClusterCallbacks(node), b.fabric().bandwidth, b.switch_link_latency(),
                                    sg4::Link::SharingPolicy::SPLITDUPLEX);
  out.zone->seal();
  out.zone_made_ports = true;
  std::string shape;
  for (const int d : dims) shape += (shape.empty() ? "" : "×") + std::to_string(d);
  out.description = shape + " torus";
  return out;
}

}  // namespace dtsim::sim::topology
