// The shape of the simulated cluster: topology, nodes and their GPUs, groups of nodes, and the fabrics
// that join GPUs inside a node and sites over a WAN. Built from the cluster.* keys; the platform builder
// (sim/platform.cpp, sim/topology/) turns it into SimGrid zones.
#pragma once

#include <string>
#include <vector>

#include "sim/config/hardware_config.hpp"
#include "sim/config/topology.hpp"

namespace dtsim::sim {

class Scenario;

// One named group of identical nodes (cluster.groups, "name:nodes:gpu-profile[:gpus_per_node]").
struct NodeGroup {
  std::string name;
  int nodes = 0;
  int gpus_per_node = 0;    // 0 in the parsed text: cluster.gpus_per_node
  std::string gpu_profile;  // as written: a profile name or a .ini path
  GpuSpec gpu;              // resolved from gpu_profile (make_cluster_config)
};

// Fat-tree shape as requested; 0 means "choose" (sim/topology/layout.hpp resolves it).
struct FatTreeSettings {
  int levels = 2;                 // 2: leaves and spines; 3: leaves, aggregation and core
  int leaf_ports = 0;             // NIC ports below each leaf switch
  int leaves_per_pod = 0;         // 3 levels only
  double oversubscription = 1.0;  // down:up ratio of every leaf switch
};

struct DragonflySettings {
  int groups = 0;
  int chassis_per_group = 1;
  int routers_per_chassis = 0;
  int nodes_per_router = 0;  // 0: the nodes divided by the routers
  int global_links = 1;      // parallel links between two groups
  int chassis_links = 1;     // between two routers of a group in different chassis
  int router_links = 1;      // between two routers of a chassis
};

struct ClusterConfig {
  Topology topology = Topology::Star;
  int gpus_per_node = 1;
  int nics_per_node = 1;
  bool rail_optimized = false;     // NIC j of every node on rail (leaf switches) j
  std::vector<NodeGroup> groups;   // empty: every node has the [gpu] GPU
  bool has_intra_node_fabric = false;
  FabricSpec intra_node_fabric;    // joins the GPUs of a node (NVLink/NVSwitch, PCIe)
  bool has_pcie_switch = false;    // GPU-to-NIC traffic crosses a PCIe switch (cluster.pcie_switch)
  FabricSpec pcie_switch;          // that switch's link, shared by the GPUs behind it
  int gpus_per_pcie_switch = 0;    // GPUs sharing one such link; 0: those of one NIC port
  FatTreeSettings fat_tree;
  std::vector<int> torus_dims;
  DragonflySettings dragonfly;
  Topology site_topology = Topology::Star;  // two-sites: the fabric inside each site
  std::vector<int> site_nodes;         // two-sites: nodes per site; empty = half each
  FabricSpec wan;                      // two-sites: the link between the sites

  // Whether any node holds more than one GPU.
  bool multi_gpu_nodes() const;
  // A group's GPUs per node: its own count, or cluster.gpus_per_node when it gives none.
  int gpus_per_node_of(const NodeGroup& group) const { return group.gpus_per_node > 0 ? group.gpus_per_node : gpus_per_node; }
};

// cluster.workers: how many GPUs train (RunConfig::workers).
int worker_count(const Scenario& scenario);

// Reads the other cluster.* keys and resolves the profiles they name (throws InputError at the key a user
// would change). Whether the shapes fit the workers and the strategy's server hosts is checked with the
// other cross-section rules (run_checks.hpp).
ClusterConfig make_cluster_config(const Scenario& scenario);

// Parses cluster.groups ("a100:4:a100-80gb; v100:4:v100-32gb:8"); throws ValueError with a reason.
std::vector<NodeGroup> parse_node_groups(const std::string& text);

}  // namespace dtsim::sim
