#include "sim/config/cluster_layout.hpp"

#include <algorithm>

#include "sim/config/topology_registry.hpp"

namespace dtsim::sim::topology {
namespace {

std::string str(long long v) { return std::to_string(v); }
std::string plural(long long count, const std::string& noun) { return str(count) + " " + noun + (count == 1 ? "" : "s"); }

// The GPUs behind each PCIe switch link of `node`: cluster.gpus_per_pcie_switch (0: the GPUs of one NIC port),
// or all of a node's GPUs when it has fewer. A switch holds consecutive GPUs and every GPU that uses one of
// its NIC ports.
int plan_pcie_switch(const NodePlan& node, int gpus_per_switch) {
  const int k = gpus_per_switch == 0 ? node.gpus_per_port() : std::min(gpus_per_switch, node.gpus);
  if (node.gpus % k != 0)
    throw ShapeError("cluster.gpus_per_pcie_switch",
                     "a node of " + plural(node.gpus, "GPU") + " cannot be split into PCIe switches of " + plural(k, "GPU"),
                     "use a divisor of " + str(node.gpus));
  if (k % node.gpus_per_port() != 0)
    throw ShapeError("cluster.gpus_per_pcie_switch",
                     "a PCIe switch of " + plural(k, "GPU") + " would split the " + str(node.gpus_per_port()) +
                         " GPUs that share a NIC",
                     "use a multiple of " + str(node.gpus_per_port()) + ", or more NICs per node");
  return k;
}

}  // namespace

int nic_ports(int gpus, int nics) {
  if (gpus < 1 || nics < 1) return 1;
  if (gpus % nics == 0) return nics;
  if (nics % gpus == 0) return gpus;
  return 1;
}

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
                       plural(workers, "worker") + (workers == 1 ? " does" : " do") + " not fill whole nodes of " + plural(g, "GPU"),
                       "make cluster.workers a multiple of " + str(g));
    add_nodes(workers / g, g, gpu, -1);
  } else {
    long long total = 0;
    for (size_t i = 0; i < cluster.groups.size(); ++i) {
      const NodeGroup& group = cluster.groups[i];
      const int gpus = cluster.gpus_per_node_of(group);
      total += static_cast<long long>(group.nodes) * gpus;
      if (total <= workers) add_nodes(group.nodes, gpus, group.gpu, static_cast<int>(i));
    }
    if (total != workers)
      throw ShapeError("cluster.groups", "the groups hold " + plural(total, "GPU") + " but cluster.workers is " + str(workers),
                       "set cluster.workers = " + str(total));
  }
  for (NodePlan& n : plan) {
    if (n.gpus % n.nics != 0 && n.nics % n.gpus != 0)
      throw ShapeError("cluster.nics_per_node",
                       "a node of " + plural(n.gpus, "GPU") + (n.nics < n.gpus ? " cannot share " : " cannot split ") +
                           plural(n.nics, "NIC") + " evenly",
                       "use a divisor or a multiple of " + str(n.gpus) + " (GPUs sharing a NIC, or m NICs per GPU)");
    if (cluster.has_pcie_switch) n.pcie_gpus = plan_pcie_switch(n, cluster.gpus_per_pcie_switch);
  }
  return plan;
}

std::vector<Port> ports_in_node_order(const std::vector<NodePlan>& plan, const FabricMembers& members) {
  std::vector<Port> ports;
  for (const int node : members.nodes)
    for (int port = 0; port < plan[node].ports(); ++port) ports.push_back({Port::Kind::Nic, node, port});
  for (int s = 0; s < members.servers; ++s) ports.push_back({Port::Kind::Server, members.first_server + s, 0});
  if (members.border) ports.push_back({Port::Kind::Border, 0, 0});
  return ports;
}

void check_shapes(const ClusterConfig& c, const std::vector<NodePlan>& plan, int servers) {
  const TopologyDescriptor& fabric = topology_descriptor(node_fabric(c));
  if (c.rail_optimized && c.nics_per_node < 2)
    throw ShapeError("cluster.rail_optimized", "rails need several NICs per node", "set cluster.nics_per_node");
  if (c.rail_optimized && !fabric.rails)
    throw ShapeError("cluster.rail_optimized", "rails are leaf switches of a fat-tree",
                     "use cluster.topology = fat-tree (or two-sites with fat-tree sites)");
  if (c.rail_optimized && !plan.empty() && plan.front().ports() < 2)
    throw ShapeError("cluster.rail_optimized",
                     "rails need several ports per node, but a node of " + plural(plan.front().gpus, "GPU") +
                         " bonds its " + plural(plan.front().nics, "NIC") + " into one port",
                     "set cluster.rail_optimized = false (the bonded port takes one leaf port of " +
                         str(plan.front().port_width()) + " NICs' bandwidth)");
  if (fabric.one_port_per_node && c.nics_per_node > 1)
    throw ShapeError("cluster.nics_per_node", std::string("a ") + fabric.name + " node has one port into the network",
                     "use a star or a fat-tree for nodes with several NICs");

  FabricMembers all;
  for (int i = 0; i < static_cast<int>(plan.size()); ++i) all.nodes.push_back(i);
  all.servers = servers;
  topology_descriptor(c.topology).plan(c, plan, all);
}

}  // namespace dtsim::sim::topology
