#include "sim/config/topology_registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace dtsim::sim {

bool TopologyDescriptor::reads(std::string_view key) const {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

const std::vector<TopologyDescriptor>& topology_registry() {
  static const std::vector<TopologyDescriptor> registry = {
      describe_star(),
      describe_fat_tree(),
      describe_torus(),
      describe_dragonfly(),
      describe_two_sites(),
  };
  return registry;
}

const TopologyDescriptor& topology_descriptor(Topology topology) {
  for (const TopologyDescriptor& d : topology_registry())
    if (d.topology == topology) return d;
  throw std::invalid_argument("no descriptor for topology " + std::to_string(static_cast<int>(topology)));
}

const models::NameTable<Topology>& topology_table() {
  static const models::NameTable<Topology> table = [] {
    std::vector<models::NameTable<Topology>::Entry> entries;
    for (const TopologyDescriptor& d : topology_registry()) entries.push_back({d.topology, d.name});
    return models::NameTable<Topology>(std::move(entries));
  }();
  return table;
}

const char* to_string(Topology topology) { return topology_table().name(topology); }

std::optional<Topology> parse_topology(std::string_view text) { return topology_table().parse(text); }

std::vector<std::string> topology_names() { return topology_table().names(); }

std::vector<std::string> site_topology_names() {
  std::vector<std::string> names;
  for (const TopologyDescriptor& d : topology_registry())
    if (d.site) names.emplace_back(d.name);
  return names;
}

Topology node_fabric(const ClusterConfig& cluster) {
  return topology_descriptor(cluster.topology).sites ? cluster.site_topology : cluster.topology;
}

std::vector<std::string> topology_keys(const ClusterConfig& cluster) {
  std::vector<std::string> keys = topology_descriptor(cluster.topology).keys;
  if (topology_descriptor(cluster.topology).sites) {
    const std::vector<std::string>& site = topology_descriptor(cluster.site_topology).keys;
    keys.insert(keys.end(), site.begin(), site.end());
  }
  return keys;
}

}  // namespace dtsim::sim
