// Fat-tree shape planning: which port of which leaf switch each NIC, server and border takes, and the sizes
// left unset (leaf ports, leaves per pod) chosen; the world layer builds the zone from the geometry.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/config/topology_registry.hpp"

namespace dtsim::sim {
namespace topology {
namespace {

std::string str(long long v) { return std::to_string(v); }

// An oversubscription ratio as written ("1.5", not "1.500000").
std::string ratio_string(double r) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", r);
  return text;
}

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

// The ports of every member node, and the NICs bonded into each: the same for all, since a leaf switch's
// ports are uniform (SimGrid's fat-tree) and a node's ports sit on one leaf or one per rail.
struct NodePorts {
  int ports = 1;
  int width = 1;
};

NodePorts ports_of(const std::vector<NodePlan>& plan, const FabricMembers& members) {
  if (members.nodes.empty()) return {};
  const NodePlan& first = plan[members.nodes.front()];
  for (const int i : members.nodes) {
    const NodePlan& n = plan[i];
    if (n.port_width() != first.port_width())
      throw ShapeError("cluster.nics_per_node",
                       "on a fat-tree every GPU needs the same number of NICs, but a " + str(first.gpus) +
                           "-GPU node gives each GPU " + str(first.port_width()) + " and a " + str(n.gpus) +
                           "-GPU node " + str(n.port_width()),
                       "use cluster.topology = star, or a cluster.nics_per_node no larger than the GPUs of any node");
  }
  return {first.ports(), first.port_width()};
}
}  // namespace

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
      (uplinks == leaf_ports ? "non-blocking" : std::string(ratio_text) + " oversubscribed at the leaves") +
      (port_width > 1 ? ", every link " + str(port_width) + " bonded NICs wide" : "");
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
  const NodePorts node_ports = ports_of(plan, members);
  const int per_node = node_ports.ports;  // ports per node: NICs, or bonded groups of port_width NICs
  g.port_width = node_ports.width;
  const bool rails = rail_optimized && per_node > 1;
  const std::vector<Port> node_order = ports_in_node_order(plan, members);
  const size_t ports = node_order.size();
  const int nodes = static_cast<int>(members.nodes.size());

  if (settings.levels == 2 && settings.leaves_per_pod > 0)
    throw ShapeError("cluster.leaves_per_pod", "pods exist only in a 3-level fat-tree",
                     "set cluster.fat_tree_levels = 3, or leave leaves_per_pod at 0");
  if (settings.leaf_ports > 0) {
    // cluster.leaf_ports counts NICs; a bonded port takes port_width of them.
    const int node_nics = per_node * g.port_width;
    if (!rails && node_nics > 1 && settings.leaf_ports % node_nics != 0)
      throw ShapeError("cluster.leaf_ports",
                       "leaves of " + str(settings.leaf_ports) + " ports would split a node's " + str(node_nics) +
                           " NICs over two leaves",
                       "use a multiple of " + str(node_nics) + (per_node > 1 ? ", or cluster.rail_optimized = true" : ""));
    if (settings.leaf_ports % g.port_width != 0)
      throw ShapeError("cluster.leaf_ports",
                       "leaves of " + str(settings.leaf_ports) + " ports would split the " + str(g.port_width) +
                           " NICs of a GPU over two leaves",
                       "use a multiple of " + str(g.port_width));
    g.leaf_ports = settings.leaf_ports / g.port_width;
  } else {
    g.leaf_ports = pow2_root(static_cast<long long>(ports), settings.levels);
    if (rails) g.leaf_ports = std::min(g.leaf_ports, pow2_at_least(std::max(nodes, 1)));
    if (!rails && per_node > 1) g.leaf_ports = round_up(g.leaf_ports, per_node);
  }

  const double uplinks = g.leaf_ports / settings.oversubscription;
  if (std::fabs(uplinks - std::round(uplinks)) > 1e-9 || std::round(uplinks) < 1)
    throw ShapeError("cluster.oversubscription",
                     "a leaf switch with " + str(g.leaf_ports) + " ports down" +
                         (g.port_width > 1 ? " (of " + str(g.port_width) + " bonded NICs each)" : "") + " and " +
                         ratio_string(settings.oversubscription) + ":1 oversubscription needs a whole number of uplinks",
                     "choose a ratio that divides " + str(g.leaf_ports) +
                         (settings.leaf_ports > 0 ? ", or another cluster.leaf_ports" : ", or set cluster.leaf_ports"));
  g.uplinks = static_cast<int>(std::round(uplinks));

  if (rails) {
    for (int nic = 0; nic < per_node; ++nic) {
      std::vector<Port> rail;
      for (const int node : members.nodes) rail.push_back({Port::Kind::Nic, node, nic});
      append_block(g.ports, rail, g.leaf_ports);
    }
    const std::vector<Port> rest(node_order.begin() + static_cast<long>(nodes) * per_node, node_order.end());
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
}  // namespace topology

TopologyDescriptor describe_fat_tree() {
  TopologyDescriptor d{Topology::FatTree,
                       "fat-tree",
                       {"cluster.rail_optimized", "cluster.fat_tree_levels", "cluster.leaf_ports",
                        "cluster.leaves_per_pod", "cluster.oversubscription"}};
  d.site = true;
  d.rails = true;
  d.plan = [](const ClusterConfig& c, const std::vector<topology::NodePlan>& plan,
              const topology::FabricMembers& members) {
    topology::plan_fat_tree(plan, members, c.fat_tree, c.rail_optimized);
  };
  return d;
}

}  // namespace dtsim::sim
