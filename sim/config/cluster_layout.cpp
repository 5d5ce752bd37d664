#include "sim/config/cluster_layout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dtsim::sim::topology {
namespace {

std::string str(long long v) { return std::to_string(v); }

int pow2_at_least(double x) {
  int p = 1;
  while (p < x) p *= 2;
  return p;
}

// The smallest power of two whose `exponent`-th power reaches `count` (integer arithmetic: a square or cube
// root in floating point can land a hair above an exact root and double the result).
int pow2_root(long long count, int exponent) {
  long long p = 1;
  const auto power = [&](long long base) {
    long long r = 1;
    for (int i = 0; i < exponent; ++i) r *= base;
    return r;
  };
  while (power(p) < count) p *= 2;
  return static_cast<int>(p);
}

int round_up(int value, int multiple) { return (value + multiple - 1) / multiple * multiple; }

// Appends `block` to `ports`, padded with idle ports to whole leaves, so that the next block starts on a
// fresh leaf switch.
void append_block(std::vector<Port>& ports, const std::vector<Port>& block, int leaf_ports) {
  ports.insert(ports.end(), block.begin(), block.end());
  ports.resize(static_cast<size_t>(round_up(static_cast<int>(ports.size()), leaf_ports)));
}

int nics_of(const std::vector<NodePlan>& plan, const FabricMembers& members) {
  return members.nodes.empty() ? 1 : plan[members.nodes.front()].nics;
}

}  // namespace

std::vector<NodePlan> plan_nodes(const ClusterConfig& cluster, int workers, const GpuSpec& gpu, MathMode math) {
  std::vector<NodePlan> plan;
  const auto add_nodes = [&](int count, int gpus, const GpuSpec& spec, int group) {
    for (int i = 0; i < count; ++i) {
      NodePlan n;
      n.first_rank = plan.empty() ? 0 : plan.back().first_rank + plan.back().gpus;
      n.gpus = gpus;
      n.nics = cluster.nics_per_node;
      n.gpu_speed = spec.sustained(math);
      n.group = group;
      plan.push_back(n);
    }
  };
  if (cluster.groups.empty()) {
    const int g = cluster.gpus_per_node;
    if (workers % g != 0)
      throw ShapeError("cluster.gpus_per_node",
                       str(workers) + " workers do not fill whole nodes of " + str(g) + " GPUs",
                       "make cluster.workers a multiple of " + str(g));
    add_nodes(workers / g, g, gpu, -1);
  } else {
    long long total = 0;
    for (size_t i = 0; i < cluster.groups.size(); ++i) {
      const NodeGroup& group = cluster.groups[i];
      const int gpus = group.gpus_per_node > 0 ? group.gpus_per_node : cluster.gpus_per_node;
      total += static_cast<long long>(group.nodes) * gpus;
      if (total <= workers) add_nodes(group.nodes, gpus, group.gpu, static_cast<int>(i));
    }
    if (total != workers)
      throw ShapeError("cluster.groups", "the groups hold " + str(total) + " GPUs but cluster.workers is " + str(workers),
                       "set cluster.workers = " + str(total));
  }
  for (const NodePlan& n : plan)
    if (n.gpus % n.nics != 0)
      throw ShapeError("cluster.nics_per_node",
                       "a node of " + str(n.gpus) + " GPUs cannot share " + str(n.nics) + " NICs evenly",
                       "use a divisor of the GPUs per node");
  return plan;
}

std::vector<Port> ports_in_node_order(const std::vector<NodePlan>& plan, const FabricMembers& members) {
  std::vector<Port> ports;
  for (const int node : members.nodes)
    for (int nic = 0; nic < plan[node].nics; ++nic) ports.push_back({Port::Kind::Nic, node, nic});
  for (int s = 0; s < members.servers; ++s) ports.push_back({Port::Kind::Server, members.first_server + s, 0});
  if (members.border) ports.push_back({Port::Kind::Border, 0, 0});
  return ports;
}

std::vector<unsigned> FatTreeGeometry::down() const {
  if (levels == 2) return {unsigned(leaf_ports), unsigned(leaves)};
  return {unsigned(leaf_ports), unsigned(leaves_per_pod), unsigned(pods)};
}

std::vector<unsigned> FatTreeGeometry::up() const {
  // A leaf switch has one link to each of its `uplinks` parents; with 3 levels every aggregation switch
  // has as many links up as down (leaves_per_pod), so only the leaves are oversubscribed.
  if (levels == 2) return {1u, unsigned(uplinks)};
  return {1u, unsigned(uplinks), unsigned(leaves_per_pod)};
}

int FatTreeGeometry::spines() const { return levels == 2 ? uplinks : uplinks * leaves_per_pod; }

std::string FatTreeGeometry::describe() const {
  char ratio_text[32];
  std::snprintf(ratio_text, sizeof ratio_text, "%g:1", static_cast<double>(leaf_ports) / uplinks);
  const std::string ratio =
      uplinks == leaf_ports ? "non-blocking" : std::string(ratio_text) + " oversubscribed at the leaves";
  if (levels == 2)
    return "2-level fat-tree, " + str(leaves) + " leaf switches × " + str(leaf_ports) + " ports, " + str(spines()) +
           " spines, " + ratio;
  return "3-level fat-tree, " + str(pods) + " pods × " + str(leaves_per_pod) + " leaves × " + str(leaf_ports) +
         " ports, " + str(uplinks) + " aggregation switches per pod, " + str(spines()) + " core switches, " + ratio;
}

FatTreeGeometry plan_fat_tree(const std::vector<NodePlan>& plan, const FabricMembers& members,
                              const FatTreeSettings& settings, bool rail_optimized) {
  FatTreeGeometry g;
  g.levels = settings.levels;
  const int nics = nics_of(plan, members);
  const bool rails = rail_optimized && nics > 1;
  const std::vector<Port> node_order = ports_in_node_order(plan, members);
  const size_t ports = node_order.size();
  const int nodes = static_cast<int>(members.nodes.size());

  if (settings.levels == 2 && settings.leaves_per_pod > 0)
    throw ShapeError("cluster.leaves_per_pod", "pods exist only in a 3-level fat-tree",
                     "set cluster.fat_tree_levels = 3, or leave leaves_per_pod at 0");
  if (settings.leaf_ports > 0) {
    g.leaf_ports = settings.leaf_ports;
    if (!rails && nics > 1 && g.leaf_ports % nics != 0)
      throw ShapeError("cluster.leaf_ports",
                       "leaves of " + str(g.leaf_ports) + " ports would split a node's " + str(nics) + " NICs over two leaves",
                       "use a multiple of " + str(nics) + ", or cluster.rail_optimized = true");
  } else {
    g.leaf_ports = pow2_root(static_cast<long long>(ports), settings.levels);
    if (rails) g.leaf_ports = std::min(g.leaf_ports, pow2_at_least(std::max(nodes, 1)));
    if (!rails && nics > 1) g.leaf_ports = round_up(g.leaf_ports, nics);
  }

  const double uplinks = g.leaf_ports / settings.oversubscription;
  if (std::fabs(uplinks - std::round(uplinks)) > 1e-9 || std::round(uplinks) < 1)
    throw ShapeError("cluster.oversubscription",
                     "a leaf switch with " + str(g.leaf_ports) + " ports down and " +
                         std::to_string(settings.oversubscription) + ":1 oversubscription needs a whole number of uplinks",
                     "choose a ratio that divides " + str(g.leaf_ports) + ", or set cluster.leaf_ports");
  g.uplinks = static_cast<int>(std::round(uplinks));

  if (rails) {
    for (int nic = 0; nic < nics; ++nic) {
      std::vector<Port> rail;
      for (const int node : members.nodes) rail.push_back({Port::Kind::Nic, node, nic});
      append_block(g.ports, rail, g.leaf_ports);
    }
    const std::vector<Port> rest(node_order.begin() + static_cast<long>(nodes) * nics, node_order.end());
    if (!rest.empty()) append_block(g.ports, rest, g.leaf_ports);
  } else {
    append_block(g.ports, node_order, g.leaf_ports);
  }
  g.leaves = static_cast<int>(g.ports.size()) / g.leaf_ports;

  if (settings.levels == 3) {
    g.leaves_per_pod = settings.leaves_per_pod > 0 ? settings.leaves_per_pod : pow2_root(g.leaves, 2);
    g.pods = (g.leaves + g.leaves_per_pod - 1) / g.leaves_per_pod;
    g.leaves = g.pods * g.leaves_per_pod;
    g.ports.resize(static_cast<size_t>(g.leaves) * g.leaf_ports);
  }
  return g;
}

void check_torus(const std::vector<int>& dims, int endpoints) {
  if (dims.empty())
    throw ShapeError("cluster.torus_dims", "topology torus needs its dimensions",
                     "e.g. torus_dims = 4,4 for 16 nodes or 4,4,4 for 64");
  long long product = 1;
  std::string shape;
  for (const int d : dims) {
    product *= d;
    shape += (shape.empty() ? "" : "×") + str(d);
  }
  if (product != endpoints)
    throw ShapeError("cluster.torus_dims",
                     "a " + shape + " torus has " + str(product) + " positions but there are " + str(endpoints) +
                         " nodes to place",
                     "make the dimensions multiply to " + str(endpoints));
}

std::string DragonflyGeometry::describe() const {
  return "dragonfly, " + str(groups) + " groups × " + str(chassis) + " chassis × " + str(routers) + " routers × " +
         str(nodes_per_router) + " nodes (links per group pair " + str(global_links) + ", per chassis pair " +
         str(chassis_links) + ", per router pair " + str(router_links) + ")";
}

DragonflyGeometry plan_dragonfly(const DragonflySettings& s, int endpoints) {
  if (s.groups < 1)
    throw ShapeError("cluster.dragonfly_groups", "topology dragonfly needs its number of groups", "e.g. 4");
  if (s.routers_per_chassis < 1)
    throw ShapeError("cluster.dragonfly_routers", "topology dragonfly needs its routers per chassis", "e.g. 4");
  if (s.groups > s.routers_per_chassis)
    throw ShapeError("cluster.dragonfly_groups",
                     str(s.groups) + " groups but " + str(s.routers_per_chassis) +
                         " routers per chassis: SimGrid 3.32 wires the link to group j at router j of a chassis and "
                         "crashes when there are more groups than routers",
                     "use at most " + str(s.routers_per_chassis) + " groups, or more routers per chassis");
  if (s.chassis_per_group > 1)
    throw ShapeError("cluster.dragonfly_chassis",
                     "SimGrid 3.32's dragonfly routing drops the hop between chassis inside a group when a route starts "
                     "outside chassis 0 (about 1 route in 10 is wrong with 2 chassis)",
                     "use one chassis per group (all routers of a group linked to each other)");
  DragonflyGeometry g{s.groups, s.chassis_per_group, s.routers_per_chassis, s.nodes_per_router,
                      s.global_links, s.chassis_links, s.router_links};
  const long long routers = static_cast<long long>(g.groups) * g.chassis * g.routers;
  if (g.nodes_per_router == 0) {
    if (endpoints % routers != 0)
      throw ShapeError("cluster.dragonfly_routers",
                       str(endpoints) + " nodes do not spread evenly over " + str(g.groups) + " × " + str(g.chassis) +
                           " × " + str(g.routers) + " = " + str(routers) + " routers",
                       "choose groups, chassis and routers whose product divides " + str(endpoints));
    g.nodes_per_router = static_cast<int>(endpoints / routers);
  } else if (routers * g.nodes_per_router != endpoints) {
    throw ShapeError("cluster.dragonfly_nodes_per_router",
                     str(routers) + " routers × " + str(g.nodes_per_router) + " nodes = " +
                         str(routers * g.nodes_per_router) + " positions but there are " + str(endpoints) + " nodes",
                     "set it to 0 to divide the nodes over the routers");
  }
  return g;
}

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

void check_shapes(const ClusterConfig& c, const std::vector<NodePlan>& plan, int servers) {
  const int nodes = static_cast<int>(plan.size());
  const bool fat_tree_sites = c.topology == "fat-tree" || (c.topology == "two-sites" && c.site_topology == "fat-tree");
  if (c.rail_optimized && c.nics_per_node < 2)
    throw ShapeError("cluster.rail_optimized", "rails need several NICs per node", "set cluster.nics_per_node");
  if (c.rail_optimized && !fat_tree_sites)
    throw ShapeError("cluster.rail_optimized", "rails are leaf switches of a fat-tree",
                     "use cluster.topology = fat-tree (or two-sites with fat-tree sites)");
  if ((c.topology == "torus" || c.topology == "dragonfly") && c.nics_per_node > 1)
    throw ShapeError("cluster.nics_per_node", "a " + c.topology + " node has one port into the network",
                     "use a star or a fat-tree for nodes with several NICs");

  FabricMembers all;
  for (int i = 0; i < nodes; ++i) all.nodes.push_back(i);
  all.servers = servers;
  if (c.topology == "fat-tree") plan_fat_tree(plan, all, c.fat_tree, c.rail_optimized);
  if (c.topology == "torus") check_torus(c.torus_dims, nodes + servers);
  if (c.topology == "dragonfly") plan_dragonfly(c.dragonfly, nodes + servers);
  if (c.topology == "two-sites") {
    const std::vector<int> split = split_sites(c.site_nodes, nodes);
    if (c.site_topology == "fat-tree") {
      FabricMembers site0, site1;
      for (int i = 0; i < nodes; ++i) (i < split[0] ? site0 : site1).nodes.push_back(i);
      site0.servers = servers;
      site0.border = site1.border = true;
      plan_fat_tree(plan, site0, c.fat_tree, c.rail_optimized);
      plan_fat_tree(plan, site1, c.fat_tree, c.rail_optimized);
    }
  }
}

}  // namespace dtsim::sim::topology
