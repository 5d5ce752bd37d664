// Nodes whose GPUs own several NICs each (one bonded port of m NICs per GPU) and PCIe switches between GPUs
// and NICs (cluster.pcie_switch): the node plan, the errors that name their key, and transfer times on the
// built platforms against closed forms written from the profiles' numbers.
#include <gtest/gtest.h>

#include "sim/config/cluster_layout.hpp"
#include "tests/sim/topology_support.hpp"

namespace dtsim::sim {
namespace {

using namespace testing;

// The shipped network_profiles/fabric/ib-ndr-400.ini and pcie4-x16.ini.
struct Ndr {
  static constexpr double bandwidth = 50e9, link = 0.6e-6, sw = 130e-9, efficiency = 0.94;
};
struct Pcie4 {
  static constexpr double bandwidth = 31.5e9, link = 0.5e-6, sw = 0.0, efficiency = 0.79;
};

const std::string kNvlink = "intra_node_fabric = " + profile("test-nvlink") + "\n";

void expect_error(const std::string& text, const std::string& key, const std::string& reason) {
  const std::string e = config_error_of(text);
  EXPECT_TRUE(contains(e, key)) << "expected " << key << " in: " << e;
  EXPECT_TRUE(contains(e, reason)) << "expected '" << reason << "' in: " << e;
}

topology::NodePlan node_of(int gpus, int nics) {
  ClusterConfig c;
  c.gpus_per_node = gpus;
  c.nics_per_node = nics;
  return topology::plan_nodes(c, gpus, GpuSpec{}, MathMode::Fp32).front();
}

// ---- the node plan and its errors ----------------------------------------------------------------------

TEST(BondedNics, AGpuOwnsMNicsAsOnePort) {
  struct Case {
    int gpus, nics, ports, width;
  };
  for (const Case c : {Case{1, 1, 1, 1}, Case{1, 4, 1, 4}, Case{2, 4, 2, 2}, Case{4, 8, 4, 2}, Case{8, 4, 4, 1},
                       Case{8, 8, 8, 1}, Case{2, 16, 2, 8}}) {
    const topology::NodePlan n = node_of(c.gpus, c.nics);
    EXPECT_EQ(n.ports(), c.ports) << c.gpus << " GPUs, " << c.nics << " NICs";
    EXPECT_EQ(n.port_width(), c.width) << c.gpus << " GPUs, " << c.nics << " NICs";
    EXPECT_EQ(n.gpus_per_port() * n.ports(), c.gpus);
  }
}

TEST(BondedNics, OtherRatiosAndShapesThatCannotHoldThemAreRefusedAtTheirKey) {
  expect_error("[cluster]\nworkers = 4\ngpus_per_node = 2\nnics_per_node = 3\n" + kNvlink, "cluster.nics_per_node",
               "a node of 2 GPUs cannot split 3 NICs evenly");
  expect_error("[cluster]\nworkers = 8\ngpus_per_node = 4\nnics_per_node = 6\n" + kNvlink, "cluster.nics_per_node",
               "use a divisor or a multiple of 4");
  // On a fat-tree every GPU needs the same NICs: groups of 1-GPU and 4-GPU nodes with 4 NICs each do not.
  expect_error("[cluster]\ntopology = fat-tree\nworkers = 6\nnics_per_node = 4\n" + kNvlink +
                   "groups = a:2:a100-40gb:1; b:1:a100-40gb:4\n",
               "cluster.nics_per_node", "every GPU needs the same number of NICs");
  // One bonded port per node: nothing to put on rails.
  expect_error("[cluster]\ntopology = fat-tree\nworkers = 8\nnics_per_node = 4\nrail_optimized = true\n",
               "cluster.rail_optimized", "a node of 1 GPU bonds its 4 NICs into one port");
  // cluster.leaf_ports counts NICs: a bonded port of 4 cannot straddle two leaves.
  expect_error("[cluster]\ntopology = fat-tree\nworkers = 8\nnics_per_node = 4\nleaf_ports = 6\n", "cluster.leaf_ports",
               "split a node's 4 NICs");
  expect_error("[cluster]\ntopology = fat-tree\nworkers = 8\ngpus_per_node = 2\nnics_per_node = 4\nrail_optimized = true\n"
               "leaf_ports = 3\n" + kNvlink,
               "cluster.leaf_ports", "split the 2 NICs of a GPU");
}

TEST(BondedNics, FatTreeLeafPortsCountNicsAndEveryLinkIsBonded) {
  ClusterConfig c;
  c.nics_per_node = 4;
  const auto plan = topology::plan_nodes(c, 16, GpuSpec{}, MathMode::Fp32);
  topology::FabricMembers members;
  for (int i = 0; i < 16; ++i) members.nodes.push_back(i);
  FatTreeSettings s;
  s.leaf_ports = 16;  // NICs: 4 bonded ports of 4
  s.oversubscription = 2;
  const auto g = topology::plan_fat_tree(plan, members, s, false);
  EXPECT_EQ(g.port_width, 4);
  EXPECT_EQ(g.leaf_ports, 4);
  EXPECT_EQ(g.uplinks, 2);
  EXPECT_EQ(g.leaves, 4);
  EXPECT_TRUE(contains(g.describe(), "2:1 oversubscribed at the leaves, every link 4 bonded NICs wide")) << g.describe();
}

TEST(PcieSwitch, SwitchesHoldConsecutiveGpusAndWholeNics) {
  const std::string pcie = "pcie_switch = pcie4-x16\n";
  const RunConfig c = config_of("[cluster]\nworkers = 16\ngpus_per_node = 8\nnics_per_node = 8\n" + kNvlink + pcie);
  EXPECT_TRUE(c.layout.has_pcie_switch);
  EXPECT_DOUBLE_EQ(c.layout.pcie_switch.bandwidth, Pcie4::bandwidth);
  EXPECT_EQ(c.layout.gpus_per_pcie_switch, 0);
  expect_error("[cluster]\nworkers = 16\ngpus_per_node = 8\ngpus_per_pcie_switch = 3\n" + kNvlink + pcie,
               "cluster.gpus_per_pcie_switch", "a node of 8 GPUs cannot be split into PCIe switches of 3 GPUs");
  expect_error("[cluster]\nworkers = 16\ngpus_per_node = 8\nnics_per_node = 2\ngpus_per_pcie_switch = 2\n" + kNvlink + pcie,
               "cluster.gpus_per_pcie_switch", "a PCIe switch of 2 GPUs would split the 4 GPUs that share a NIC");
  expect_error("[cluster]\npcie_switch = pcie9\n", "cluster.pcie_switch", "no fabric profile named 'pcie9'");
  // By default a link per NIC port, shared by the GPUs that use that NIC; a node with fewer GPUs than
  // gpus_per_pcie_switch has one link.
  struct Case {
    int gpus, nics, setting, expected;
  };
  for (const Case k : {Case{8, 8, 0, 1}, Case{8, 4, 0, 2}, Case{8, 1, 0, 8}, Case{1, 4, 0, 1}, Case{2, 4, 0, 1},
                       Case{8, 8, 2, 2}, Case{8, 4, 4, 4}, Case{1, 1, 4, 1}}) {
    ClusterConfig one;
    one.gpus_per_node = k.gpus;
    one.nics_per_node = k.nics;
    one.has_pcie_switch = true;
    one.gpus_per_pcie_switch = k.setting;
    EXPECT_EQ(topology::plan_nodes(one, k.gpus, GpuSpec{}, MathMode::Fp32).front().pcie_gpus, k.expected)
        << k.gpus << " GPUs, " << k.nics << " NICs, setting " << k.setting;
  }
}

// ---- transfer times on the built platforms --------------------------------------------------------------

// One GPU per node with m HDR NICs on a star: a flow between two nodes gets m × a NIC's rate.
TEST(BondedNics, OneGpuWithMNicsSendsAtMTimesANicOnAStar) {
  const double bytes = 1e9;
  for (const int m : {1, 2, 4}) {
    const RunConfig c = config_of("[cluster]\nworkers = 4\nnics_per_node = " + std::to_string(m) + "\n");
    EXPECT_NEAR(transfer_time(c, {{0, 1, bytes}}), ib_route_latency(2) + bytes / (m * Ib::efficiency * Ib::bandwidth),
                1e-12)
        << m << " NICs";
  }
}

// Across a fat-tree the bonded ports' flows cross the spines at their rate; a server keeps one NIC.
TEST(BondedNics, FatTreeLinksCarryABondedFlowAndAServerHasOneNic) {
  const double bytes = 1e9;
  // 8 nodes of 1 GPU and 4 NICs, leaves of 8 NICs: 2 bonded ports per leaf, 0 → 7 crosses a spine.
  const RunConfig c = config_of("[cluster]\ntopology = fat-tree\nworkers = 8\nnics_per_node = 4\nleaf_ports = 8\n");
  EXPECT_NEAR(transfer_time(c, {{0, 7, bytes}}, 1), ib_route_latency(4) + bytes / (4 * Ib::efficiency * Ib::bandwidth),
              1e-12);
  // Worker 0 to server 0 (index 8), on leaf 4 with the padding.
  EXPECT_NEAR(transfer_time(c, {{0, 8, bytes}}, 1), ib_route_latency(4) + bytes / (Ib::efficiency * Ib::bandwidth),
              1e-12);
  // Rails: 2 nodes of 4 GPUs with 8 NICs, GPU g of each node on rail g: 2 NICs' rate across (a GPU reaches
  // its NICs over PCIe, not through its NVLink port).
  const RunConfig rails = config_of("[cluster]\ntopology = fat-tree\nworkers = 8\ngpus_per_node = 4\nnics_per_node = 8\n"
                                    "rail_optimized = true\n" + kNvlink);
  EXPECT_NEAR(transfer_time(rails, {{1, 5, bytes}}), ib_route_latency(2) + bytes / (2 * Ib::efficiency * Ib::bandwidth),
              1e-12);
  // Two GPUs of a node send at once, each through its own bonded port.
  EXPECT_NEAR(transfer_time(rails, {{0, 4, bytes}, {1, 5, bytes}}),
              ib_route_latency(2) + bytes / (2 * Ib::efficiency * Ib::bandwidth), 1e-12);
}

// Groups of different node sizes on a star with 4 NICs per node: 1-GPU nodes bond all 4, 4-GPU nodes give
// each GPU one.
TEST(BondedNics, GroupsBondWhereTheirNodesHaveFewerGpusThanNics) {
  const RunConfig c = config_of("[cluster]\nworkers = 6\nnics_per_node = 4\n" + kNvlink +
                                "groups = small:2:a100-40gb:1; big:1:a100-40gb:4\n");
  const double bytes = 1e9;
  EXPECT_NEAR(transfer_time(c, {{0, 1, bytes}}), ib_route_latency(2) + bytes / (4 * Ib::efficiency * Ib::bandwidth),
              1e-12);
  // Into the 4-GPU node, one NIC's rate; the far GPU's NVLink port is not on the route.
  EXPECT_NEAR(transfer_time(c, {{0, 2, bytes}}), ib_route_latency(2) + bytes / (Ib::efficiency * Ib::bandwidth), 1e-12);
}

// Two nodes of 2 GPUs, a 400 Gb/s NIC per GPU behind PCIe Gen4 x16 (31.5 GB/s: the NIC is faster than its
// slot). A route leaving a node: PCIe switch link (GPU → switch → NIC: 2 links), NIC, switch, NIC, PCIe
// switch link; the GPUs' NVLink ports carry only their traffic to each other. With gpus_per_pcie_switch = 2 both GPUs' traffic shares one link per node.
std::string pcie_nodes(const std::string& extra) {
  return "[cluster]\nworkers = 4\ngpus_per_node = 2\nnics_per_node = 2\n" + kNvlink + extra +
         "[fabric]\nprofile = ib-ndr-400\n";
}
double pcie_route_latency() {
  return 2 * (2 * Pcie4::link + Pcie4::sw) + 2 * Ndr::link + Ndr::sw;
}

TEST(PcieSwitch, TwoGpusBehindOneSwitchShareItsBandwidth) {
  const double bytes = 1e9;
  const double pcie = Pcie4::efficiency * Pcie4::bandwidth;  // achievable through the switch, < NDR's 47 GB/s
  const RunConfig shared = config_of(pcie_nodes("pcie_switch = pcie4-x16\ngpus_per_pcie_switch = 2\n"));
  EXPECT_NEAR(transfer_time(shared, {{0, 2, bytes}}), pcie_route_latency() + bytes / pcie, 1e-12);
  EXPECT_NEAR(transfer_time(shared, {{0, 2, bytes}, {1, 3, bytes}}), pcie_route_latency() + bytes / (pcie / 2), 1e-12);
  // By default a link per NIC port, here per GPU: nothing shared.
  const RunConfig own = config_of(pcie_nodes("pcie_switch = pcie4-x16\n"));
  EXPECT_NEAR(transfer_time(own, {{0, 2, bytes}, {1, 3, bytes}}), pcie_route_latency() + bytes / pcie, 1e-12);
  // Traffic between the GPUs of a node stays on NVLink.
  EXPECT_NEAR(transfer_time(shared, {{0, 1, bytes}}), nvlink_ports_latency() + bytes / (NvLink::efficiency * NvLink::bandwidth),
              1e-12);
}

TEST(PcieSwitch, WithoutTheKeyNothingChanges) {
  const double bytes = 1e9;
  const std::vector<std::tuple<int, int, double>> both = {{0, 2, bytes}, {1, 3, bytes}};
  const double expected = 2 * Ndr::link + Ndr::sw + bytes / (Ndr::efficiency * Ndr::bandwidth);
  EXPECT_NEAR(transfer_time(config_of(pcie_nodes("")), both), expected, 1e-12);
  // gpus_per_pcie_switch alone has no effect (and is reported: ignored_keys_test): the same routes, link for link.
  const std::vector<std::pair<int, int>> pairs = {{0, 1}, {0, 2}, {1, 3}, {3, 0}};
  EXPECT_EQ(routes_between(config_of(pcie_nodes("gpus_per_pcie_switch = 1\n")), pairs),
            routes_between(config_of(pcie_nodes("")), pairs));
}

TEST(PcieSwitch, SingleGpuNodesCrossTheirOwnSwitch) {
  const RunConfig c = config_of("[cluster]\nworkers = 2\npcie_switch = pcie4-x16\n");
  const double bytes = 1e9;
  // HDR (24 GB/s achievable) is slower than the switch (24.9 GB/s): the NIC limits, its latency adds.
  EXPECT_NEAR(transfer_time(c, {{0, 1, bytes}}),
              2 * (2 * Pcie4::link + Pcie4::sw) + ib_route_latency(2) + bytes / (Ib::efficiency * Ib::bandwidth), 1e-12);
  const auto names = in_platform(c, [](sg4::Engine&, const Platform& p) {
    return nlohmann::json{p.worker_links[0]->get_name(), route_json(p.workers[0], p.workers[1])};
  });
  EXPECT_EQ(names[0], "node0.pcie0");
  EXPECT_EQ(names[1]["links"].size(), 4u) << names.dump();
}

}  // namespace
}  // namespace dtsim::sim
