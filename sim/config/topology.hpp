// The network topologies between the nodes. Only the enum lives here, so that ClusterConfig can hold one
// without the registry; names, keys and shape planning of each are in topology_registry.hpp.
#pragma once

namespace dtsim::sim {

enum class Topology { Star, FatTree, Torus, Dragonfly, TwoSites };

// The name cluster.topology spells it ("star", "fat-tree", "torus", "dragonfly", "two-sites").
const char* to_string(Topology topology);

}  // namespace dtsim::sim
