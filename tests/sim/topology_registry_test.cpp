// The topology registry's two halves (config: names, keys, shape planning; world: SimGrid builders) cover
// every Topology exactly once, names round-trip, and each descriptor claims exactly the cluster.* keys its
// topology reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "sim/config/schema.hpp"
#include "sim/config/topology_registry.hpp"
#include "sim/world/topology/registry.hpp"
#include "tests/sim/topology_support.hpp"

namespace dtsim::sim {
namespace {

// Every Topology value: a new topology is added here too.
const std::vector<Topology> kAll = {Topology::Star, Topology::FatTree, Topology::Torus, Topology::Dragonfly,
                                    Topology::TwoSites};

TEST(TopologyRegistry, EveryTopologyHasOneDescriptorAndOneBuilderInEnumOrder) {
  ASSERT_EQ(topology_registry().size(), kAll.size());
  ASSERT_EQ(topology::topology_builders().size(), kAll.size());
  for (size_t i = 0; i < kAll.size(); ++i) {
    const Topology t = kAll[i];
    EXPECT_EQ(topology_registry()[i].topology, t) << i;
    EXPECT_EQ(topology::topology_builders()[i].topology, t) << i;
    EXPECT_EQ(std::count_if(topology_registry().begin(), topology_registry().end(),
                            [&](const TopologyDescriptor& d) { return d.topology == t; }),
              1);
    EXPECT_EQ(std::count_if(topology::topology_builders().begin(), topology::topology_builders().end(),
                            [&](const topology::TopologyBuilder& b) { return b.topology == t; }),
              1);
    EXPECT_EQ(topology_descriptor(t).topology, t);
    EXPECT_NE(topology_descriptor(t).plan, nullptr) << to_string(t);
    const topology::TopologyBuilder& b = topology::topology_builder(t);
    EXPECT_EQ(b.topology, t);
    EXPECT_NE(b.fabric == nullptr, b.cluster == nullptr) << to_string(t) << ": exactly one way to build it";
  }
  EXPECT_THROW(topology_descriptor(static_cast<Topology>(99)), std::invalid_argument);
  EXPECT_THROW(topology::topology_builder(static_cast<Topology>(99)), std::invalid_argument);
}

TEST(TopologyRegistry, NamesRoundTripAndAreTheKeysChoices) {
  EXPECT_EQ(topology_names(), (std::vector<std::string>{"star", "fat-tree", "torus", "dragonfly", "two-sites"}));
  EXPECT_EQ(site_topology_names(), (std::vector<std::string>{"star", "fat-tree"}));
  for (const Topology t : kAll) {
    ASSERT_TRUE(parse_topology(to_string(t)).has_value()) << to_string(t);
    EXPECT_EQ(*parse_topology(to_string(t)), t);
    EXPECT_STREQ(to_string(t), topology_descriptor(t).name);
  }
  EXPECT_FALSE(parse_topology("mesh").has_value());
  EXPECT_FALSE(parse_topology("Star").has_value());
  EXPECT_FALSE(parse_topology("").has_value());

  const KeySpec* topology = find_key("cluster.topology");
  ASSERT_NE(topology, nullptr);
  EXPECT_EQ(topology->choices, topology_names());
  EXPECT_EQ(topology->default_text, "star");
  const KeySpec* site = find_key("cluster.site_topology");
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(site->choices, site_topology_names());
  EXPECT_EQ(site->default_text, "star");
}

TEST(TopologyRegistry, SiteTopologiesAreSingleFabricsThatTwoSitesCanNest) {
  for (const TopologyDescriptor& d : topology_registry()) {
    if (d.site) {
      EXPECT_NE(topology::topology_builder(d.topology).fabric, nullptr) << d.name;
      EXPECT_FALSE(d.sites) << d.name << ": a site cannot hold sites";
    }
  }
  EXPECT_TRUE(topology_descriptor(Topology::TwoSites).sites);
}

TEST(TopologyRegistry, DescriptorKeysExistInTheSchema) {
  for (const TopologyDescriptor& d : topology_registry())
    for (const std::string& key : d.keys) {
      EXPECT_NE(find_key(key), nullptr) << d.name << " claims " << key;
      EXPECT_EQ(key.rfind("cluster.", 0), 0u) << key;
      EXPECT_EQ(std::count(d.keys.begin(), d.keys.end(), key), 1) << d.name << " lists " << key << " twice";
    }
}

// Which topologies read each topology-specific cluster.* key (cluster_config.cpp, config/topology/*_shape.cpp,
// world/topology/*.cpp); every other cluster.* key is read whatever the topology.
const std::map<std::string, std::set<Topology>> kReaders = {
    {"cluster.rail_optimized", {Topology::FatTree}},
    {"cluster.fat_tree_levels", {Topology::FatTree}},
    {"cluster.leaf_ports", {Topology::FatTree}},
    {"cluster.leaves_per_pod", {Topology::FatTree}},
    {"cluster.oversubscription", {Topology::FatTree}},
    {"cluster.torus_dims", {Topology::Torus}},
    {"cluster.dragonfly_groups", {Topology::Dragonfly}},
    {"cluster.dragonfly_chassis", {Topology::Dragonfly}},
    {"cluster.dragonfly_routers", {Topology::Dragonfly}},
    {"cluster.dragonfly_nodes_per_router", {Topology::Dragonfly}},
    {"cluster.dragonfly_links", {Topology::Dragonfly}},
    {"cluster.site_topology", {Topology::TwoSites}},
    {"cluster.site_nodes", {Topology::TwoSites}},
    {"cluster.wan_profile", {Topology::TwoSites}},
    {"cluster.wan_bandwidth", {Topology::TwoSites}},
    {"cluster.wan_latency", {Topology::TwoSites}},
};
const std::set<std::string> kEveryTopology = {"cluster.workers",       "cluster.topology",     "cluster.gpus_per_node",
                                              "cluster.intra_node_fabric", "cluster.nics_per_node", "cluster.groups",
                                              "cluster.pcie_switch",   "cluster.gpus_per_pcie_switch"};

TEST(TopologyRegistry, EachTopologySpecificKeyIsClaimedByExactlyItsReaders) {
  for (const auto& [key, readers] : kReaders) {
    std::set<Topology> claimed;
    for (const TopologyDescriptor& d : topology_registry())
      if (d.reads(key)) claimed.insert(d.topology);
    EXPECT_EQ(claimed, readers) << key;
  }
  // Every cluster.* key of the schema is either topology-specific (above) or read by all; nothing else.
  for (const KeySpec& spec : all_keys()) {
    if (spec.name.rfind("cluster.", 0) != 0) continue;
    EXPECT_NE(kReaders.count(spec.name) + kEveryTopology.count(spec.name), 0u) << spec.name << " is unaccounted for";
    EXPECT_EQ(kReaders.count(spec.name) * kEveryTopology.count(spec.name), 0u) << spec.name;
  }
  for (const TopologyDescriptor& d : topology_registry())
    for (const std::string& key : d.keys) EXPECT_EQ(kReaders.count(key), 1u) << d.name << " claims " << key;
}

TEST(TopologyRegistry, KeysInEffectIncludeThoseOfTheSites) {
  const RunConfig star_sites = testing::config_of("[cluster]\ntopology = two-sites\nworkers = 8\nwan_bandwidth = 10Gbps\nwan_latency = 5ms\n");
  EXPECT_EQ(topology_keys(star_sites.layout), topology_descriptor(Topology::TwoSites).keys);
  EXPECT_EQ(node_fabric(star_sites.layout), Topology::Star);

  const RunConfig tree_sites = testing::config_of(
      "[cluster]\ntopology = two-sites\nworkers = 8\nwan_bandwidth = 10Gbps\nwan_latency = 5ms\nsite_topology = fat-tree\n");
  EXPECT_EQ(tree_sites.layout.site_topology, Topology::FatTree);
  EXPECT_EQ(node_fabric(tree_sites.layout), Topology::FatTree);
  const std::vector<std::string> keys = topology_keys(tree_sites.layout);
  EXPECT_NE(std::find(keys.begin(), keys.end(), "cluster.leaf_ports"), keys.end());
  EXPECT_NE(std::find(keys.begin(), keys.end(), "cluster.wan_latency"), keys.end());
  EXPECT_EQ(std::find(keys.begin(), keys.end(), "cluster.torus_dims"), keys.end());

  const RunConfig torus = testing::config_of("[cluster]\ntopology = torus\nworkers = 8\ntorus_dims = 2,4\n");
  EXPECT_EQ(torus.layout.topology, Topology::Torus);
  EXPECT_EQ(topology_keys(torus.layout), std::vector<std::string>{"cluster.torus_dims"});
}

}  // namespace
}  // namespace dtsim::sim
