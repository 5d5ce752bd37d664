// The world layer's half of the topology registry (the config half, config/topology_registry.hpp, holds
// names, keys and shape planning): how each topology is built in SimGrid. build_fabrics() dispatches on
// cluster.topology through it, and two-sites builds its sites with the builder of cluster.site_topology.
//
// Adding a topology: its builder in one file of world/topology/, declared in build.hpp, and one line in
// topology_builders() (registry.cpp).
#pragma once

#include "sim/config/topology.hpp"
#include "sim/world/topology/build.hpp"

namespace dtsim::sim::topology {

// One fabric named `name` joining `members`, under `parent` (nullptr: the root).
using FabricBuilder = Fabric (*)(PlatformBuild& b, const sg4::NetZone* parent, const std::string& name,
                                 const FabricMembers& members);
// Every fabric of a platform whose topology is more than one fabric.
using ClusterBuilder = BuiltFabrics (*)(PlatformBuild& b);

struct TopologyBuilder {
  Topology topology;
  // Exactly one of the two is set: `fabric` for a topology that is one fabric (it then also serves as a site
  // of two-sites where the config registry allows it), `cluster` for one made of several.
  FabricBuilder fabric;
  ClusterBuilder cluster;
};

// One builder per Topology value, in Topology order.
const std::vector<TopologyBuilder>& topology_builders();
// The builder of `topology`; throws std::invalid_argument for a value outside the enum.
const TopologyBuilder& topology_builder(Topology topology);

// The fabrics of the platform b plans, for its cluster.topology: a one-fabric topology is the zone
// "cluster" at the root, joining every node and server.
BuiltFabrics build_fabrics(PlatformBuild& b);

}  // namespace dtsim::sim::topology
