// Two sites: how the nodes split between the two datacenters (the servers and a border router each go
// with them), each site then planned as its own fabric of cluster.site_topology.
#include "sim/config/topology_registry.hpp"

namespace dtsim::sim {
namespace topology {
namespace {

std::string str(long long v) { return std::to_string(v); }

}  // namespace

std::vector<int> split_sites(const std::vector<int>& site_nodes, int nodes) {
  if (site_nodes.empty()) {
    if (nodes < 2) throw ShapeError("cluster.workers", "two sites need at least two nodes");
    return {(nodes + 1) / 2, nodes / 2};
  }
  if (site_nodes.size() != 2)
    throw ShapeError("cluster.site_nodes", "two-sites needs the nodes of exactly two sites", "e.g. site_nodes = 4,4");
  if (site_nodes[0] < 1 || site_nodes[1] < 1 || site_nodes[0] + site_nodes[1] != nodes)
    throw ShapeError("cluster.site_nodes",
                     "the sites hold " + str(site_nodes[0]) + " + " + str(site_nodes[1]) + " nodes but the cluster has " +
                         str(nodes),
                     "give two positive counts that add up to " + str(nodes));
  return site_nodes;
}

std::vector<FabricMembers> site_members(const std::vector<int>& site_nodes, const FabricMembers& all) {
  const std::vector<int> split = split_sites(site_nodes, static_cast<int>(all.nodes.size()));
  std::vector<FabricMembers> sites(2);
  for (size_t i = 0; i < all.nodes.size(); ++i)
    sites[static_cast<int>(i) < split[0] ? 0 : 1].nodes.push_back(all.nodes[i]);
  sites[0].first_server = all.first_server;  // servers sit in the first site
  sites[0].servers = all.servers;
  sites[0].border = sites[1].border = true;
  return sites;
}

}  // namespace topology

TopologyDescriptor describe_two_sites() {
  TopologyDescriptor d{Topology::TwoSites,
                       "two-sites",
                       {"cluster.site_topology", "cluster.site_nodes", "cluster.wan_profile", "cluster.wan_bandwidth",
                        "cluster.wan_latency"}};
  d.sites = true;
  d.plan = [](const ClusterConfig& c, const std::vector<topology::NodePlan>& plan,
              const topology::FabricMembers& members) {
    const TopologyDescriptor& site = topology_descriptor(c.site_topology);
    for (const topology::FabricMembers& m : topology::site_members(c.site_nodes, members)) site.plan(c, plan, m);
  };
  return d;
}

}  // namespace dtsim::sim
