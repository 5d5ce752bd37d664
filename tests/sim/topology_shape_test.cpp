// The cluster keys: resolved shapes (layout.cpp, no SimGrid) and the InputErrors that name the key to change
// for every shape that cannot be built.
#include <gtest/gtest.h>

#include "sim/config/cluster_layout.hpp"
#include "tests/sim/topology_support.hpp"

namespace dtsim::sim {
namespace {

using namespace testing;
using topology::Port;

void expect_error(const std::string& text, const std::string& key, const std::string& reason) {
  const std::string e = config_error_of(text);
  EXPECT_TRUE(contains(e, key)) << "expected " << key << " in: " << e;
  EXPECT_TRUE(contains(e, reason)) << "expected '" << reason << "' in: " << e;
}

const std::string kNvlink = "intra_node_fabric = " + profile("test-nvlink") + "\n";

TEST(ClusterKeys, DefaultsKeepTheStar) {
  const RunConfig c = config_of("");
  EXPECT_EQ(c.layout.topology, Topology::Star);
  EXPECT_EQ(c.layout.gpus_per_node, 1);
  EXPECT_FALSE(c.layout.multi_gpu_nodes());
  EXPECT_TRUE(c.layout.groups.empty());
}

TEST(ClusterKeys, ProfilesOfGroupsIntraNodeFabricAndWan) {
  const RunConfig c = config_of("[cluster]\nworkers = 12\ngroups = big:1:a100-40gb:8; small : 2 : " +
                                profile("test-v100") + " : 2\n" + kNvlink +
                                "topology = two-sites\nwan_profile = " + profile("test-wan") + "\nwan_bandwidth = 100Gbps\n"
                                "[gpu]\nefficiency = 0.3\n");
  ASSERT_EQ(c.layout.groups.size(), 2u);
  EXPECT_EQ(c.layout.groups[0].gpus_per_node, 8);
  EXPECT_EQ(c.layout.groups[0].gpu.name, "A100-SXM4-40GB");
  EXPECT_DOUBLE_EQ(c.layout.groups[0].gpu.efficiency, 0.5);  // the profile's: [gpu] overrides stay with [gpu]
  // The [gpu] section is on no node (its 0.3 is reported as a key without effect): the run's GPU is the first
  // group's.
  EXPECT_DOUBLE_EQ(c.gpu.efficiency, 0.5);
  EXPECT_EQ(c.layout.groups[1].gpu.name, "test V100");
  EXPECT_DOUBLE_EQ(c.layout.groups[1].gpu.peak_bf16, 125e12);
  EXPECT_DOUBLE_EQ(c.layout.intra_node_fabric.bandwidth, NvLink::bandwidth);
  EXPECT_DOUBLE_EQ(c.layout.wan.bandwidth, 12.5e9);  // the key overrides the profile
  // The profile's link is half a route through its fabric: the WAN's one way is two of them.
  EXPECT_DOUBLE_EQ(c.layout.wan.link_latency, 2 * Wan::link);
  EXPECT_DOUBLE_EQ(c.layout.wan.efficiency, Wan::efficiency);
  EXPECT_EQ(c.scenario_json["cluster"]["topology"], "two-sites");
}

TEST(ClusterErrors, InvalidShapesNameTheirKey) {
  expect_error("[cluster]\ntopology = dragonfly\nworkers = 40\ndragonfly_groups = 5\ndragonfly_routers = 4\n",
               "cluster.dragonfly_groups", "crashes when there are more groups than routers");
  expect_error("[cluster]\ntopology = dragonfly\nworkers = 30\ndragonfly_groups = 2\ndragonfly_routers = 4\n",
               "cluster.dragonfly_routers", "do not spread evenly");
  expect_error("[cluster]\ntopology = dragonfly\nworkers = 16\ndragonfly_groups = 2\ndragonfly_routers = 4\n"
               "dragonfly_nodes_per_router = 3\n",
               "cluster.dragonfly_nodes_per_router", "24 positions");
  expect_error("[cluster]\ntopology = dragonfly\n", "cluster.dragonfly_groups", "needs its number of groups");
  expect_error("[cluster]\ntopology = dragonfly\nworkers = 64\ndragonfly_groups = 4\ndragonfly_chassis = 2\n"
               "dragonfly_routers = 4\n",
               "cluster.dragonfly_chassis", "drops the hop between chassis");
  expect_error("[cluster]\nworkers = 12\ngpus_per_node = 8\n" + kNvlink, "cluster.gpus_per_node",
               "do not fill whole nodes of 8 GPUs");
  expect_error("[cluster]\ntopology = fat-tree\noversubscription = 0.5\n", "cluster.oversubscription", "out of range");
  expect_error("[cluster]\ntopology = fat-tree\nworkers = 16\nleaf_ports = 4\noversubscription = 3\n",
               "cluster.oversubscription", "whole number of uplinks");
  expect_error("[cluster]\ntopology = torus\nworkers = 16\ntorus_dims = 4,3\n", "cluster.torus_dims",
               "12 positions but there are 16 nodes");
  expect_error("[cluster]\ntopology = torus\n", "cluster.torus_dims", "needs its dimensions");
  expect_error("[cluster]\ntopology = torus\nworkers = 32\ngpus_per_node = 2\ntorus_dims = 4,4\nnics_per_node = 2\n" + kNvlink,
               "cluster.nics_per_node", "one port");
  expect_error("[cluster]\nworkers = 16\ngpus_per_node = 8\n", "cluster.intra_node_fabric", "nothing joins them");
  expect_error("[cluster]\nworkers = 16\ngpus_per_node = 8\nnics_per_node = 3\n" + kNvlink, "cluster.nics_per_node",
               "cannot share 3 NICs");
  expect_error("[cluster]\nworkers = 16\ngpus_per_node = 8\nnics_per_node = 8\nrail_optimized = true\n" + kNvlink,
               "cluster.rail_optimized", "leaf switches of a fat-tree");
  expect_error("[cluster]\ntopology = fat-tree\nrail_optimized = true\n", "cluster.rail_optimized", "several NICs");
  expect_error("[cluster]\ntopology = fat-tree\nworkers = 32\ngpus_per_node = 8\nnics_per_node = 4\nleaf_ports = 6\n" + kNvlink,
               "cluster.leaf_ports", "split a node's 4 NICs");
  expect_error("[cluster]\ntopology = fat-tree\nleaves_per_pod = 4\n", "cluster.leaves_per_pod", "3-level");
  // Blamed on the key the user set (cluster.topology); the hint names the WAN keys to add.
  expect_error("[cluster]\ntopology = two-sites\n", "cluster.topology", "needs the WAN");
  expect_error("[cluster]\ntopology = two-sites\n", "cluster.topology", "wan_profile");
  expect_error("[cluster]\ntopology = two-sites\nwan_bandwidth = 10Gbps\nwan_latency = 5ms\nsite_nodes = 3,3\n",
               "cluster.site_nodes", "3 + 3 nodes but the cluster has 8");
  // A WAN's bandwidth without its latency (there is no profile to take it from) would put the sites in one room.
  expect_error("[cluster]\ntopology = two-sites\nwan_bandwidth = 10Gbps\n", "cluster.wan_bandwidth",
               "needs the WAN's one-way latency");
}

TEST(ClusterErrors, GroupsAndTheirProfiles) {
  expect_error("[cluster]\nworkers = 8\ngroups = a:2:a100-40gb; b:3:a100-40gb\n", "cluster.groups",
               "the groups hold 5 GPUs but cluster.workers is 8");
  expect_error("[cluster]\ngroups = a:2\n", "cluster.groups", "not name:nodes:gpu-profile");
  expect_error("[cluster]\ngroups = a:x:a100-40gb\n", "cluster.groups", "not an integer");
  expect_error("[cluster]\ngroups = a:4:a100-40gb; a:4:a100-40gb\n", "cluster.groups", "two groups are named 'a'");
  const std::string e = config_error_of("[cluster]\ngroups = a:8:a100-40g\n");
  EXPECT_TRUE(contains(e, "topology_test.ini:2")) << e;
  EXPECT_TRUE(contains(e, "cluster.groups")) << e;
  EXPECT_TRUE(contains(e, "did you mean 'a100-40gb'")) << e;
  expect_error("[cluster]\nintra_node_fabric = nvlink9\n", "cluster.intra_node_fabric", "no fabric profile named 'nvlink9'");
}

TEST(ClusterErrors, ServersThatDoNotFitAreInputErrorsToo) {
  const RunConfig c = config_of("[cluster]\ntopology = torus\nworkers = 16\ntorus_dims = 4,4\n");
  const std::string out = dtsim::testing::run_in_child([&] {
    auto engine = create_engine({NetworkModel::Cm02, false});
    try {
      build_platform(*engine, platform_spec(c), 1);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  });
  EXPECT_TRUE(contains(out, "cluster.torus_dims")) << out;
  EXPECT_TRUE(contains(out, "16 positions but there are 17 nodes")) << out;
}

// ---- layout (plain numbers) ---------------------------------------------------------------------------

std::vector<topology::NodePlan> nodes(int count, int gpus, int nics) {
  ClusterConfig c;
  c.gpus_per_node = gpus;
  c.nics_per_node = nics;
  GpuSpec gpu;
  gpu.peak_fp32 = 1e12;
  return topology::plan_nodes(c, count * gpus, gpu, MathMode::Fp32);
}

topology::FabricMembers all(int count, int servers = 0) {
  topology::FabricMembers m;
  for (int i = 0; i < count; ++i) m.nodes.push_back(i);
  m.servers = servers;
  return m;
}

TEST(FatTreeLayout, AutomaticSizesArePowersOfTwoNearTheRoots) {
  FatTreeSettings two;
  for (const auto& [n, ports] : std::vector<std::pair<int, int>>{{8, 4}, {100, 16}, {1024, 32}, {4096, 64}}) {
    const auto g = topology::plan_fat_tree(nodes(n, 1, 1), all(n), two, false);
    EXPECT_EQ(g.leaf_ports, ports) << n;
    EXPECT_EQ(g.uplinks, ports);
    EXPECT_EQ(g.leaves, (n + ports - 1) / ports);
  }
  FatTreeSettings three;
  three.levels = 3;
  const auto g = topology::plan_fat_tree(nodes(4096, 1, 1), all(4096), three, false);
  EXPECT_EQ(g.down(), (std::vector<unsigned>{16, 16, 16}));
  EXPECT_EQ(g.up(), (std::vector<unsigned>{1, 16, 16}));
  EXPECT_EQ(g.spines(), 256);
}

TEST(FatTreeLayout, OversubscriptionRemovesUplinksAndPaddingKeepsLeavesWhole) {
  FatTreeSettings s;
  s.leaf_ports = 8;
  s.oversubscription = 4;
  const auto g = topology::plan_fat_tree(nodes(20, 1, 1), all(20, 1), s, false);
  EXPECT_EQ(g.uplinks, 2);
  EXPECT_EQ(g.leaves, 3);
  EXPECT_EQ(g.ports[20].kind, Port::Kind::Server);
  EXPECT_EQ(g.ports[21].kind, Port::Kind::Idle);
  EXPECT_EQ(g.ports.size(), 24u);
  EXPECT_TRUE(contains(g.describe(), "4:1 oversubscribed")) << g.describe();
}

TEST(FatTreeLayout, RailsPutNicJOfEveryNodeOnRailJsLeaves) {
  FatTreeSettings s;
  s.leaf_ports = 4;
  const auto g = topology::plan_fat_tree(nodes(6, 8, 4), all(6, 1), s, true);
  // 4 rails of 6 NICs, each padded to 2 leaves of 4; then the server's leaf.
  ASSERT_EQ(g.leaves, 9);
  for (int rail = 0; rail < 4; ++rail)
    for (int node = 0; node < 6; ++node) {
      const Port& p = g.ports[static_cast<size_t>(rail * 8 + node)];
      EXPECT_EQ(p.kind, Port::Kind::Nic);
      EXPECT_EQ(p.index, node);
      EXPECT_EQ(p.nic, rail);
    }
  EXPECT_EQ(g.ports[6].kind, Port::Kind::Idle);
  EXPECT_EQ(g.ports[32].kind, Port::Kind::Server);
  // Without rails a node's NICs are consecutive ports of one leaf.
  const auto flat = topology::plan_fat_tree(nodes(6, 8, 4), all(6), s, false);
  EXPECT_EQ(flat.ports[5].index, 1);
  EXPECT_EQ(flat.ports[5].nic, 1);
}

TEST(NodePlan, RanksFollowGroupsAndNodes) {
  ClusterConfig c;
  c.gpus_per_node = 2;
  c.groups = parse_node_groups("x:2:p; y:1:q:4");
  c.groups[0].gpu.peak_fp32 = 10;
  c.groups[1].gpu.peak_fp32 = 20;
  const auto plan = topology::plan_nodes(c, 8, GpuSpec{}, MathMode::Fp32);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[1].first_rank, 2);
  EXPECT_EQ(plan[2].first_rank, 4);
  EXPECT_EQ(plan[2].gpus, 4);
  EXPECT_DOUBLE_EQ(plan[2].gpu_speed, 20);
  EXPECT_EQ(topology::split_sites({}, 5), (std::vector<int>{3, 2}));
}

}  // namespace
}  // namespace dtsim::sim
