// Two sites (datacenters), each a star or a fat-tree, under a root zone that joins them by one WAN link
// between their border hosts: a route between sites is site A to its border, the WAN, border to site B.
#include "sim/world/topology/build.hpp"

namespace dtsim::sim::topology {

std::vector<Fabric> build_two_sites(PlatformBuild& b, std::string& description) {
  const ClusterConfig& cluster = b.cluster();
  const std::vector<int> split = split_sites(cluster.site_nodes, static_cast<int>(b.nodes().size()));
  std::vector<FabricMembers> sites(2);
  for (int i = 0; i < static_cast<int>(b.nodes().size()); ++i) sites[i < split[0] ? 0 : 1].nodes.push_back(i);
  sites[0].servers = b.servers();  // servers sit in the first site
  sites[0].border = sites[1].border = true;

  sg4::NetZone* root = sg4::create_full_zone("two-sites");
  std::vector<Fabric> fabrics;
  for (int s = 0; s < 2; ++s) {
    const std::string name = "site" + std::to_string(s);
    fabrics.push_back(cluster.site_topology == "fat-tree" ? build_fat_tree(b, root, name, sites[s])
                                                          : build_star_fabric(b, root, name, sites[s]));
  }

  // The border routers' switching goes on the WAN link, which crosses both.
  const FabricSpec& wan = cluster.wan;
  sg4::SplitDuplexLink* link = root->create_split_duplex_link("wan", wan.bandwidth);
  link->set_latency(wan.link_latency + 2.0 * wan.switch_latency);
  b.own(link);
  b.calibration().add(link, wan);
  root->add_route(fabrics[0].zone->get_netpoint(), fabrics[1].zone->get_netpoint(),
                  b.border_of("site0")->get_netpoint(), b.border_of("site1")->get_netpoint(),
                  {{link, sg4::LinkInRoute::Direction::UP}}, true);
  root->seal();
  description = "two sites joined by " + wan.name + ": site0 " + std::to_string(split[0]) + " nodes on a " +
                fabrics[0].description + ", site1 " + std::to_string(split[1]) + " nodes on a " + fabrics[1].description;
  return fabrics;
}

}  // namespace dtsim::sim::topology
