// Two sites (datacenters), each a fabric of cluster.site_topology, under a root zone that joins them by one
// WAN link between their border hosts: a route between sites is site A to its border, the WAN, border to
// site B.
#include "sim/world/topology/registry.hpp"

namespace dtsim::sim::topology {

BuiltFabrics build_two_sites(PlatformBuild& b) {
  const ClusterConfig& cluster = b.cluster();
  const std::vector<FabricMembers> sites = site_members(cluster.site_nodes, b.everyone());
  const FabricBuilder build_site = topology_builder(cluster.site_topology).fabric;

  sg4::NetZone* root = sg4::create_full_zone("two-sites");
  BuiltFabrics out;
  for (int s = 0; s < 2; ++s) out.fabrics.push_back(build_site(b, root, "site" + std::to_string(s), sites[s]));

  // The border routers' switching goes on the WAN link, which crosses both.
  const FabricSpec& wan = cluster.wan;
  sg4::SplitDuplexLink* link = root->create_split_duplex_link("wan", wan.bandwidth);
  link->set_latency(wan.link_latency + 2.0 * wan.switch_latency);
  b.own(link);
  b.calibration().add(link, wan);
  root->add_route(out.fabrics[0].zone->get_netpoint(), out.fabrics[1].zone->get_netpoint(),
                  b.border_of("site0")->get_netpoint(), b.border_of("site1")->get_netpoint(),
                  {{link, sg4::LinkInRoute::Direction::UP}}, true);
  root->seal();
  const auto nodes = [&](int site) {
    const size_t n = sites[static_cast<size_t>(site)].nodes.size();
    return std::to_string(n) + (n == 1 ? " node" : " nodes");
  };
  out.description = "two sites joined by " + wan.name + ": site0 " + nodes(0) + " on a " + out.fabrics[0].description +
                    ", site1 " + nodes(1) + " on a " + out.fabrics[1].description;
  return out;
}

}  // namespace dtsim::sim::topology
