// The cluster as plain numbers before any SimGrid object exists: which nodes there are and which GPUs they
// hold (in rank order), which port of a fabric each NIC, server and border router takes, and the resolved
// shapes of fat-trees, tori and dragonflies. Every problem is a ShapeError naming the key to change, so the
// scenario loader and the platform builder report the same errors.
// Each topology's planning is defined in its own file, config/topology/*_shape.cpp; check_shapes reaches it
// through the topology registry (topology_registry.hpp).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "sim/config/cluster_config.hpp"

namespace dtsim::sim::topology {

class ShapeError : public std::runtime_error {
 public:
  ShapeError(std::string key, const std::string& reason, std::string hint = "")
      : std::runtime_error(reason), key_(std::move(key)), hint_(std::move(hint)) {}
  const std::string& key() const { return key_; }
  const std::string& hint() const { return hint_; }

 private:
  std::string key_;
  std::string hint_;
};

// How many ports into the network a node of `gpus` GPUs and `nics` NICs has: its NICs when its GPUs share
// them (nics divides gpus), one per GPU when each GPU owns several (gpus divides nics: a GPU's nics / gpus NICs
// are one bonded port of that many times a NIC's bandwidth), and 1 for any other ratio (which plan_nodes
// refuses).
int nic_ports(int gpus, int nics);

// One machine that holds workers.
struct NodePlan {
  int first_rank = 0;  // its GPUs are ranks first_rank … first_rank + gpus − 1
  int gpus = 1;
  int nics = 1;
  double gpu_speed = 0;  // FLOP/s each of its GPUs sustains
  int group = -1;        // index into ClusterConfig::groups; −1 without groups
  int pcie_gpus = 0;     // GPUs behind each PCIe switch between GPUs and NICs (cluster.pcie_switch); 0: none

  int ports() const { return nic_ports(gpus, nics); }
  int port_width() const { return nics / ports(); }  // NICs bonded into each port (1: a port is one NIC)
  int gpus_per_port() const { return gpus / ports(); }
  int pcie_switches() const { return pcie_gpus > 0 ? gpus / pcie_gpus : 0; }
};

// The worker nodes in rank order: the groups in the order written, each node's GPUs consecutive.
std::vector<NodePlan> plan_nodes(const ClusterConfig& cluster, int workers, const GpuSpec& gpu, MathMode math);

// What one port of a fabric connects.
struct Port {
  enum class Kind { Nic, Server, Border, Idle };
  Kind kind = Kind::Idle;
  int index = 0;  // the node (Nic) or server (Server)
  int nic = 0;    // Nic: which port of the node (a NIC, or the bonded NICs of one GPU)
};

// What one fabric joins: some nodes, the servers and, for a site of two-sites, its border router.
struct FabricMembers {
  std::vector<int> nodes;  // indices into the node plan, ascending
  int first_server = 0;
  int servers = 0;
  bool border = false;
};

// Ports in node order (every port of a node, then the next node), then servers, then the border.
std::vector<Port> ports_in_node_order(const std::vector<NodePlan>& plan, const FabricMembers& members);

struct FatTreeGeometry {
  int levels = 2;
  int leaf_ports = 0;      // ports below a leaf switch
  int port_width = 1;      // NICs bonded into each port and each link (every GPU owns that many NICs)
  int uplinks = 0;         // links from a leaf switch up (one to each switch above it)
  int leaves_per_pod = 1;  // 3 levels
  int pods = 1;            // 3 levels
  int leaves = 0;
  std::vector<Port> ports;  // leaf_ports × leaves, in SimGrid's leaf order; unused ones Idle

  // SimGrid's parallel-ports generalized fat-tree parameters (FatTreeParams): children per switch at
  // each level, parents per element below each level, links between each pair.
  std::vector<unsigned> down() const;
  std::vector<unsigned> up() const;
  int spines() const;  // switches at the top level
  std::string describe() const;
};

// Rail-optimized: the ports of NIC j of all nodes fill the leaves of rail j (whole leaves, padded with idle
// ports), so NIC j of every node hangs off the same leaf switches; otherwise a node's NICs are
// consecutive ports of one leaf. Unset sizes are chosen as powers of two near √ports (2 levels) or ∛ports.
// Where every GPU owns w NICs, a port is w bonded NICs and so is every link of the tree (a bonded port's
// single flow must be able to cross the switches at its rate): cluster.leaf_ports still counts NICs, w per
// port, and the shape is planned in bonded ports. Servers and borders keep one NIC's bandwidth.
FatTreeGeometry plan_fat_tree(const std::vector<NodePlan>& plan, const FabricMembers& members,
                              const FatTreeSettings& settings, bool rail_optimized);

// Checks that the torus dimensions hold exactly `endpoints` nodes.
void check_torus(const std::vector<int>& dims, int endpoints);

struct DragonflyGeometry {
  int groups = 0, chassis = 0, routers = 0, nodes_per_router = 0;
  int global_links = 1, chassis_links = 1, router_links = 1;
  std::string describe() const;
};

// Resolves nodes per router and rejects shapes SimGrid 3.32 gets wrong: more groups than routers per
// chassis (its DragonflyZone attaches the link to group j at router j of each chassis and crashes), and
// more than one chassis per group (its routing then skips the hop between chassis on some routes).
DragonflyGeometry plan_dragonfly(const DragonflySettings& settings, int endpoints);

// How many of the `nodes` each of the two sites holds (cluster.site_nodes, or half each, the first site
// taking the odd one).
std::vector<int> split_sites(const std::vector<int>& site_nodes, int nodes);
// The members of each of the two sites: `all`'s nodes split by split_sites, the servers in the first site,
// and a border (where the WAN joins) in each.
std::vector<FabricMembers> site_members(const std::vector<int>& site_nodes, const FabricMembers& all);

// Checks every shape the configuration implies, with `servers` extra hosts (what the platform builder will
// ask for); throws ShapeError.
void check_shapes(const ClusterConfig& cluster, const std::vector<NodePlan>& plan, int servers);

}  // namespace dtsim::sim::topology
