#include "sim/world/topology/registry.hpp"

#include <stdexcept>

namespace dtsim::sim::topology {

const std::vector<TopologyBuilder>& topology_builders() {
  static const std::vector<TopologyBuilder> builders = {
      {Topology::Star, build_star_fabric, nullptr},
      {Topology::FatTree, build_fat_tree, nullptr},
      {Topology::Torus, build_torus, nullptr},
      {Topology::Dragonfly, build_dragonfly, nullptr},
      {Topology::TwoSites, nullptr, build_two_sites},
  };
  return builders;
}

const TopologyBuilder& topology_builder(Topology topology) {
  for (const TopologyBuilder& b : topology_builders())
    if (b.topology == topology) return b;
  throw std::invalid_argument(std::string("no builder for topology ") + to_string(topology));
}

BuiltFabrics build_fabrics(PlatformBuild& b) {
  const TopologyBuilder& builder = topology_builder(b.cluster().topology);
  if (builder.cluster) return builder.cluster(b);
  BuiltFabrics out;
  out.fabrics.push_back(builder.fabric(b, nullptr, "cluster", b.everyone()));
  out.description = out.fabrics.front().description;
  return out;
}

}  // namespace dtsim::sim::topology
