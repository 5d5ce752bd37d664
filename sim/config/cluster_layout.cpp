#include "sim/config/cluster_layout.hpp"

#include "sim/config/topology_registry.hpp"

namespace dtsim::sim::topology {
namespace {

std::string str(long long v) { return std::to_string(v); }
std::string plural(long long count, const std::string& noun) { return str(count) + " " + noun + (count == 1 ? "" : "s"); }

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
                       plural(workers, "worker") + (workers == 1 ? " does" : " do") + " not fill whole nodes of " + plural(g, "GPU"),
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
      throw ShapeError("cluster.groups", "the groups hold " + plural(total, "GPU") + " but cluster.workers is " + str(workers),
                       "set cluster.workers = " + str(total));
  }
  for (const NodePlan& n : plan)
    if (n.gpus % n.nics != 0)
      throw ShapeError("cluster.nics_per_node",
                       "a node of " + plural(n.gpus, "GPU") + " cannot share " + plural(n.nics, "NIC") + " evenly",
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

void check_shapes(const ClusterConfig& c, const std::vector<NodePlan>& plan, int servers) {
  const TopologyDescriptor& fabric = topology_descriptor(node_fabric(c));
  if (c.rail_optimized && c.nics_per_node < 2)
    throw ShapeError("cluster.rail_optimized", "rails need several NICs per node", "set cluster.nics_per_node");
  if (c.rail_optimized && !fabric.rails)
    throw ShapeError("cluster.rail_optimized", "rails are leaf switches of a fat-tree",
                     "use cluster.topology = fat-tree (or two-sites with fat-tree sites)");
  if (fabric.one_port_per_node && c.nics_per_node > 1)
    throw ShapeError("cluster.nics_per_node", std::string("a ") + fabric.name + " node has one port into the network",
                     "use a star or a fat-tree for nodes with several NICs");

  FabricMembers all;
  for (int i = 0; i < static_cast<int>(plan.size()); ++i) all.nodes.push_back(i);
  all.servers = servers;
  topology_descriptor(c.topology).plan(c, plan, all);
}

}  // namespace dtsim::sim::topology
