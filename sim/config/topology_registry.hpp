// The topologies dtsim knows, one descriptor each: its name (the one place Topology's names are written),
// the cluster.* keys it reads, what it allows, and how its shape is planned. Everything in the config layer
// that depends on the chosen topology (parsing cluster.topology, the keys' choices, check_shapes) is derived
// from this list; the world layer's half (how each is built in SimGrid) is world/topology/registry.hpp.
//
// Adding a topology: a Topology value, one file in config/topology/ with its shape planning and its
// describe_…(), one line in topology_registry() (topology_registry.cpp), and its builder in the world layer
// (world/topology/registry.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/name_table.hpp"
#include "sim/config/cluster_layout.hpp"
#include "sim/config/topology.hpp"

namespace dtsim::sim {

// Checks the shape of one fabric of the topology joining `members` of the node plan, as the world builder
// will make it; throws topology::ShapeError naming the key to change.
using ShapePlanner = void (*)(const ClusterConfig& cluster, const std::vector<topology::NodePlan>& plan,
                              const topology::FabricMembers& members);

struct TopologyDescriptor {
  Topology topology;
  const char* name;  // as cluster.topology accepts it
  // The full names of the cluster.* keys that only some topologies read and this one does: a key not listed
  // (and not one every topology reads) has no effect with it. two-sites lists its own keys; those of its
  // sites' topology come from that topology's descriptor (topology_keys()).
  std::vector<std::string> keys;
  bool site = false;   // can be cluster.site_topology, the fabric inside each site of two-sites
  bool sites = false;  // the nodes sit in two sites of cluster.site_topology, joined by cluster.wan
  bool rails = false;  // has leaf switches that rails can be (cluster.rail_optimized)
  // A direct network (each node is a router): a node has a single port into it, so nics_per_node must be 1.
  bool one_port_per_node = false;
  ShapePlanner plan = nullptr;

  bool reads(std::string_view key) const;
};

// Every topology, one descriptor per Topology value, in Topology order (the order of the choices).
const std::vector<TopologyDescriptor>& topology_registry();
// The descriptor of `topology`; throws std::invalid_argument for a value outside the enum.
const TopologyDescriptor& topology_descriptor(Topology topology);

// The one table of Topology's names (built from the registry), and the keys' choices.
const models::NameTable<Topology>& topology_table();
std::optional<Topology> parse_topology(std::string_view text);
std::vector<std::string> topology_names();       // cluster.topology: star, fat-tree, torus, dragonfly, two-sites
std::vector<std::string> site_topology_names();  // cluster.site_topology: star, fat-tree

// The topology of the fabric the nodes' NICs plug into: the site topology for two-sites, else the topology.
Topology node_fabric(const ClusterConfig& cluster);
// The topology-specific keys that take effect with `cluster`'s topology (and its sites' topology).
std::vector<std::string> topology_keys(const ClusterConfig& cluster);

// The descriptors, one file each in config/topology/.
TopologyDescriptor describe_star();
TopologyDescriptor describe_fat_tree();
TopologyDescriptor describe_torus();
TopologyDescriptor describe_dragonfly();
TopologyDescriptor describe_two_sites();

}  // namespace dtsim::sim
