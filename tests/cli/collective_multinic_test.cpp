// Channel rings through `dtsim collective`: a node's bus bandwidth grows with its NICs (every channel leaves
// through its own NIC, over PCIe, not through its GPU's NVLink port), and the fidelities agree on such nodes. Nodes
// with more NICs than GPUs (each GPU's NICs bonded into one port) against the α-β closed form.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/run_dtsim.hpp"

namespace {

nlohmann::json collective_json(const std::string& args) {
  const dtsim::testing::DtsimOutcome r = dtsim::testing::run_dtsim("collective --format json " + args, true);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.output);
}

// HDR as shipped (network_profiles/fabric/ib-hdr-200.ini): 200 Gb/s, 0.6 µs per link, 130 ns per switch,
// 0.96 efficiency; a star route is 2 links and a switch.
constexpr double kHdrRate = 25e9 * 0.96;
constexpr double kHdrRoute = 2 * 0.6e-6 + 130e-9;

// A ring allreduce of S bytes over N ranks in C channels whose node boundaries each cross a port of rate B:
// 2(N − 1) steps of α + S/(N·C·B).
double ring_seconds(int ranks, int channels, double bytes, double alpha, double rate) {
  return 2.0 * (ranks - 1) * (alpha + bytes / (static_cast<double>(ranks) * channels * rate));
}

// Two HGX-like nodes of 8 GPUs (NVLink 3 inside) on a star of HDR ports, `nics` NICs per node.
std::string two_nodes(int nics) {
  return "--ranks 16 --gpus-per-node 8 --set cluster.intra_node_fabric=nvlink3-nvswitch --set cluster.nics_per_node=" +
         std::to_string(nics);
}

TEST(MultiNicRings, BusBandwidthScalesWithTheNicsOfANode) {
  // Each HDR NIC gives 200 Gb/s × 0.96 = 24 GB/s per direction; a ring of C channels, one per NIC, moves
  // C × 24 GB/s across each node boundary. A channel's network hop leaves its GPU over PCIe, so a GPU's NVLink
  // port (300 GB/s × 0.78) carries only the channels' hops inside the node and never limits them here.
  const double one = collective_json(two_nodes(1) + " --sizes 1GiB")["rows"][0]["busbw_gbps"].get<double>();
  EXPECT_NEAR(one, 24.0, 0.5);
  for (const int nics : {2, 4, 8}) {
    const nlohmann::json doc = collective_json(two_nodes(nics) + " --sizes 1GiB");
    const double busbw = doc["rows"][0]["busbw_gbps"].get<double>();
    // Within 0.5 %: only the latency terms keep it from C × one NIC. (While network traffic also crossed the
    // NVLink ports, 8 channels read 184.3 GB/s, 4 % short.)
    EXPECT_NEAR(busbw / one, nics, 0.005 * nics) << nics << " NICs: " << busbw << " GB/s";
    // The α-β form, a step's α the HDR route.
    const double expected = ring_seconds(16, nics, 1073741824.0, kHdrRoute, kHdrRate);
    EXPECT_NEAR(doc["rows"][0]["time_us"].get<double>() * 1e-6, expected, 1e-4 * expected) << nics << " NICs";
  }
  // Up to the NVLink limit: with 8 XDR NICs (800 Gb/s × 0.94 = 94 GB/s each) every GPU's port carries 7
  // channels' hops inside the node at 300 GB/s × 0.78 = 234 GB/s together, so each channel runs at 234/7 GB/s
  // and the node's bus bandwidth is 8 × 234/7 = 267.4 GB/s, not 8 × 94.
  const double xdr = collective_json(two_nodes(8) + " --profile ib-xdr-800 --sizes 1GiB")["rows"][0]["busbw_gbps"]
                         .get<double>();
  EXPECT_NEAR(xdr, 8 * 234.0 / 7, 0.01 * 8 * 234.0 / 7);
  // One channel on the same nodes crosses each boundary through one NIC.
  const double single = collective_json(two_nodes(8) + " --sizes 1GiB --set collective.channels=1")["rows"][0]
                            ["busbw_gbps"].get<double>();
  EXPECT_NEAR(single, one, 0.01 * one);
}

TEST(MultiNicRings, FidelitiesAgreeOnMultiNicNodes) {
  for (const std::string sizes : {"64KiB", "16MiB", "1GiB"})
    for (const int nics : {2, 4}) {
      const auto time_of = [&](const std::string& fidelity) {
        return collective_json(two_nodes(nics) + " --sizes " + sizes + " --fidelity " + fidelity)["rows"][0]["time_us"]
            .get<double>();
      };
      const double stepwise = time_of("stepwise");
      EXPECT_NEAR(time_of("aggregated"), stepwise, 0.02 * stepwise) << sizes << ", " << nics << " NICs";
      EXPECT_NEAR(time_of("analytic"), stepwise, 0.02 * stepwise) << sizes << ", " << nics << " NICs";
    }
}

// NCCL's tree on the same nodes: one pair of trees per channel, each leaving a node through another GPU's NIC.
// It used to cross every node boundary through its first GPU's NIC whatever the node had (2961 µs for 1 to 8
// NICs at 64 MiB on a star, and slower with more NICs on a fat-tree). At 1 GiB its time is bound by the NIC a
// channel crosses, so it falls as 1/C; and on a fat-tree more NICs are never slower.
TEST(MultiNicTrees, TheTreesCrossEveryNicOfANode) {
  const auto time_of = [](int nics, const std::string& extra) {
    return collective_json(two_nodes(nics) + " --algorithm tree --sizes 1GiB " + extra)["rows"][0]["time_us"].get<double>();
  };
  const double one = time_of(1, "");
  for (const int nics : {2, 4}) {
    const double t = time_of(nics, "");
    EXPECT_NEAR(one / t, nics, 0.05 * nics) << nics << " NICs: " << t << " us against " << one;
  }
  // With 8, each GPU's NVLink port carries 8 channels' chain hops (S per phase at 300 GB/s × 0.78) while each
  // NIC carries S/16 per phase at 24 GB/s: the ports begin to bound it, short of 8 ×.
  const double eight = time_of(8, "");
  EXPECT_GT(one / eight, 5.0);
  EXPECT_LT(one / eight, 8.0);
  EXPECT_NEAR(time_of(8, "--set collective.channels=1"), one, 0.01 * one) << "one channel: one NIC";
  double before = time_of(1, "--topology fat-tree");
  for (const int nics : {2, 4, 8}) {
    const double t = time_of(nics, "--topology fat-tree");
    EXPECT_LT(t, before) << nics << " NICs on a fat-tree";
    before = t;
  }
  // The fidelities agree on channel trees too.
  for (const std::string fidelity : {"aggregated", "analytic"}) {
    const double stepwise = collective_json(two_nodes(4) + " --algorithm tree --sizes 16MiB --fidelity stepwise")["rows"][0]
                                ["time_us"].get<double>();
    const double other = collective_json(two_nodes(4) + " --algorithm tree --sizes 16MiB --fidelity " + fidelity)["rows"][0]
                             ["time_us"].get<double>();
    EXPECT_NEAR(other, stepwise, 0.02 * stepwise) << fidelity;
  }
}

// One GPU per node, m NICs per node: the GPU's m NICs are one port of m × 24 GB/s, and one ring fills it
// (one channel: no GPU inside a node to spread channels over).
TEST(BondedNics, OneGpuWithMNicsGetsMTimesTheBusBandwidth) {
  const double bytes = 1073741824.0;
  double one_nic = 0;
  for (const int m : {1, 2, 4}) {
    const nlohmann::json row = collective_json("--ranks 4 --sizes 1GiB --fidelity stepwise --set cluster.nics_per_node=" +
                                               std::to_string(m))["rows"][0];
    const double expected = ring_seconds(4, 1, bytes, kHdrRoute, m * kHdrRate);
    EXPECT_NEAR(row["time_us"].get<double>() * 1e-6, expected, 1e-4 * expected) << m << " NICs";
    EXPECT_NEAR(row["model_us"].get<double>() * 1e-6, expected, 1e-4 * expected) << m << " NICs";
    if (m == 1) one_nic = row["busbw_gbps"].get<double>();
    EXPECT_NEAR(row["busbw_gbps"].get<double>() / one_nic, m, 1e-3 * m) << m << " NICs";
  }
  EXPECT_NEAR(one_nic, 2.0 * 3 / 4 * bytes / ring_seconds(4, 1, bytes, kHdrRoute, kHdrRate) / 1e9, 1e-3);
  // More channels through the same bonded port change nothing but the transfers.
  const double four = collective_json("--ranks 4 --sizes 1GiB --set cluster.nics_per_node=4 --set collective.channels=4")
                          ["rows"][0]["time_us"].get<double>();
  EXPECT_NEAR(four * 1e-6, ring_seconds(4, 1, bytes, kHdrRoute, 4 * kHdrRate), 1e-4 * four * 1e-6);
}

// Four nodes of 2 GPUs with 4 NICs: each GPU owns a port of 2 NICs; 2 channels (one per port) leave every
// node, each at 48 GB/s, so busbw = 2 channels × 2 NICs × 24 GB/s. A step's α is the node crossing: the
// HDR route alone, since a GPU reaches its NIC over PCIe, not through its NVLink port.
TEST(BondedNics, TwoGpusWithFourNicsGetFourNicsOfBusBandwidth) {
  const double bytes = 1073741824.0;
  const std::string nodes = "--ranks 8 --gpus-per-node 2 --set cluster.intra_node_fabric=nvlink3-nvswitch --sizes 1GiB";
  const nlohmann::json row = collective_json(nodes + " --set cluster.nics_per_node=4")["rows"][0];
  const double expected = ring_seconds(8, 2, bytes, kHdrRoute, 2 * kHdrRate);
  EXPECT_NEAR(row["time_us"].get<double>() * 1e-6, expected, 1e-4 * expected);
  // Against one NIC per node (one channel at 24 GB/s): 4× but for the latency terms.
  const double one_nic = collective_json(nodes + " --set cluster.nics_per_node=1")["rows"][0]["busbw_gbps"].get<double>();
  const double ratio = ring_seconds(8, 1, bytes, kHdrRoute, kHdrRate) / expected;
  EXPECT_NEAR(ratio, 4.0, 0.01);
  EXPECT_NEAR(row["busbw_gbps"].get<double>() / one_nic, ratio, 1e-3 * ratio);
  // The fidelities agree on such nodes.
  for (const std::string fidelity : {"aggregated", "analytic"}) {
    const double t = collective_json(nodes + " --set cluster.nics_per_node=4 --fidelity " + fidelity)["rows"][0]
                         ["time_us"].get<double>();
    EXPECT_NEAR(t, row["time_us"].get<double>(), 2e-3 * t) << fidelity;
  }
}

TEST(BondedNics, UnevenRatiosAreRefusedWithOneLine) {
  const dtsim::testing::DtsimOutcome r = dtsim::testing::run_dtsim(
      "collective --ranks 4 --gpus-per-node 2 --set cluster.intra_node_fabric=nvlink3-nvswitch --set cluster.nics_per_node=3",
      true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "dtsim: error: command line (--set): cluster.nics_per_node: a node of 2 GPUs cannot split 3 NICs evenly; use "
            "a divisor or a multiple of 2 (GPUs sharing a NIC, or m NICs per GPU)\n");
}

// A PCIe switch key alone (gpus_per_pcie_switch without pcie_switch) changes nothing but a warning.
TEST(PcieSwitch, WithoutASwitchTheResultsAreTheSame) {
  const std::string hgx = "collective --format csv --ranks 16 --gpus-per-node 8 --set cluster.intra_node_fabric=nvlink3-nvswitch "
                          "--set cluster.nics_per_node=8 --sizes 64KiB:16MiB";
  const auto without_wall = [](const std::string& csv) {
    std::string rows;
    for (const std::string& line : dtsim::testing::lines_of(csv)) {
      std::vector<std::string> cells;
      size_t start = 0;
      for (size_t at; (at = line.find(',', start)) != std::string::npos; start = at + 1) cells.push_back(line.substr(start, at - start));
      cells.push_back(line.substr(start));
      if (cells.size() > 6) cells.erase(cells.begin() + 6);  // wall_s
      for (const std::string& c : cells) rows += c + ",";
      rows += "\n";
    }
    return rows;
  };
  const dtsim::testing::DtsimOutcome plain = dtsim::testing::run_dtsim(hgx, true);
  const dtsim::testing::DtsimOutcome keyed = dtsim::testing::run_dtsim(hgx + " --set cluster.gpus_per_pcie_switch=4", true);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(keyed.exit_code, 0) << keyed.err;
  EXPECT_EQ(without_wall(keyed.output), without_wall(plain.output));
  EXPECT_NE(keyed.err.find("cluster.gpus_per_pcie_switch: has no effect: cluster.pcie_switch is empty"), std::string::npos)
      << keyed.err;
}

}  // namespace
