// The collectives beside allreduce on nodes with several NICs, through `dtsim collective`, against closed forms:
// all-to-all (expert parallelism), all-gather and reduce-scatter (sharded data parallelism); the protocols
// NCCL runs all-to-all with; and NCCL's tree latency model for a small allreduce between multi-GPU nodes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_dtsim.hpp"

namespace {

nlohmann::json collective_json(const std::string& args) {
  const dtsim::testing::DtsimOutcome r = dtsim::testing::run_dtsim("collective --format json " + args, true);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.output);
}

double time_us(const std::string& args) { return collective_json(args)["rows"][0]["time_us"].get<double>(); }

// HDR as shipped (network_profiles/fabric/ib-hdr-200.ini): 200 Gb/s at 0.96 efficiency per NIC, a star route of
// 2 links of 0.6 µs and a switch of 130 ns.
constexpr double kHdrRate = 25e9 * 0.96;
constexpr double kHdrRouteUs = 2 * 0.6 + 0.13;

// Two HGX-like nodes of 8 GPUs (NVLink 3 inside) on a star of HDR ports, `nics` NICs per node.
std::string two_nodes(int nics) {
  return "--ranks 16 --gpus-per-node 8 --set cluster.intra_node_fabric=nvlink3-nvswitch --set cluster.nics_per_node=" +
         std::to_string(nics);
}

constexpr double kSize = 64.0 * 1024 * 1024;

TEST(MultiNicOps, AllToAllIsBoundByTheNicsItsRemoteShareCrosses) {
  // Each of the 16 ranks sends S/16 to every other rank at once. The 8 ranks of the other node are reached over
  // the network, through the NIC a GPU shares with g/m − 1 others: a NIC carries (8/m) · 8 · S/16 bytes out of
  // its node, at 24 GB/s, after one route's latency. What crosses NVLink (7 · S/16 per GPU at 234 GB/s) is
  // far below it.
  for (const int nics : {1, 2, 4, 8}) {
    const double per_nic = (8.0 / nics) * 8.0 * kSize / 16.0;
    const double expected = kHdrRouteUs + per_nic / kHdrRate * 1e6;
    const double t = time_us(two_nodes(nics) + " --op alltoall --sizes 64MiB");
    EXPECT_NEAR(t, expected, 1e-4 * expected) << nics << " NICs per node";
  }
  // The header's B is the slowest flow's share: with 4 NICs, 2 GPUs × 8 remote peers = 16 flows per NIC.
  const std::string header = collective_json(two_nodes(4) + " --op alltoall --sizes 64MiB")["collective"];
  EXPECT_NE(header.find("B 1.5 GB/s per flow"), std::string::npos) << header;
}

TEST(MultiNicOps, AllGatherAndReduceScatterRunOneChannelPerNic) {
  // Channel rings: N − 1 steps, each moving S/(N · C) per channel, every channel crossing a node boundary
  // through its own NIC: (N − 1)(α + S/(N·C·B)), the same for both operations.
  for (const std::string op : {"all_gather", "reduce_scatter"})
    for (const int nics : {1, 4}) {
      const double expected = 15.0 * (kHdrRouteUs + kSize / (16.0 * nics) / kHdrRate * 1e6);
      const double t = time_us(two_nodes(nics) + " --op " + op + " --sizes 64MiB");
      EXPECT_NEAR(t, expected, 1e-4 * expected) << op << ", " << nics << " NICs per node";
    }
}

TEST(MultiNicOps, FidelitiesAgreeForEveryOperationOnMultiNicNodes) {
  for (const std::string op : {"alltoall", "all_gather", "reduce_scatter", "broadcast"})
    for (const std::string size : {"64KiB", "16MiB"}) {
      const std::string args = two_nodes(4) + " --op " + op + " --sizes " + size + " --fidelity ";
      const double stepwise = time_us(args + "stepwise");
      EXPECT_NEAR(time_us(args + "aggregated"), stepwise, 0.02 * stepwise) << op << " " << size;
      EXPECT_NEAR(time_us(args + "analytic"), stepwise, 0.02 * stepwise) << op << " " << size;
    }
}

TEST(MultiNicOps, AllToAllRunsNcclsPointToPointProtocolsOnly) {
  // NCCL sends an all-to-all as point-to-point operations, which run LL or Simple and never LL128; LL for the
  // smallest messages, Simple for the large ones.
  const nlohmann::json doc = collective_json(two_nodes(4) + " --op alltoall --protocol auto --sizes 1KiB:64MiB");
  ASSERT_FALSE(doc["rows"].empty());
  for (const auto& row : doc["rows"]) {
    const std::string variant = row["variant"].get<std::string>();
    EXPECT_TRUE(variant == "direct/ll" || variant == "direct/simple") << row["size_bytes"] << " B: " << variant;
  }
  EXPECT_EQ(doc["rows"].front()["variant"], "direct/ll");
  EXPECT_EQ(doc["rows"].back()["variant"], "direct/simple");
}

TEST(MultiNicOps, ASmallTreeAllreduceCostsNcclsTreeLatencyModel) {
  // NCCL's tuning model for the tree: base + 2 · ((GPUs per node − 1) · intra-node hop + log2(nodes) · network
  // hop), with its constants for LL (6.8; NVLink 0.6, network 5.0 µs), LL128 (14; 1.25, 8.5) and Simple (8.4;
  // 4.0, 14). An 8-byte call is one chunk, so the pipeline adds nothing, and the routes' own latencies
  // (0.6 µs over NVLink, 1.33 µs over HDR) are below the protocol's hops; what is left is under 0.01 µs of wire.
  struct Protocol { std::string name; double base, nvlink, network; };
  for (const Protocol& p : {Protocol{"ll", 6.8, 0.6, 5.0}, Protocol{"ll128", 14.0, 1.25, 8.5},
                            Protocol{"simple", 8.4, 4.0, 14.0}})
    for (const int nodes : {2, 4, 8}) {
      const int log2_nodes = nodes == 2 ? 1 : nodes == 4 ? 2 : 3;
      const double expected = p.base + 2 * (7 * p.nvlink + log2_nodes * p.network);
      const std::string args = "--ranks " + std::to_string(8 * nodes) +
                               " --gpus-per-node 8 --set cluster.intra_node_fabric=nvlink3-nvswitch "
                               "--set cluster.nics_per_node=8 --algorithm tree --sizes 8B:8B --protocol " + p.name;
      EXPECT_NEAR(time_us(args), expected, 0.01) << p.name << ", " << nodes << " nodes";
    }
}

// `--algorithm auto --protocol auto` runs what NCCL's tuner picks, with the GPU's generation from `--gpu`: on
// 3 nodes of 8 H100 with 8 HDR NICs each, the choices NCCL logged on such a cluster (nccl #1453): the tree with
// LL up to 64 KiB, with LL128 at 128 and 256 KiB, the ring with Simple at 8 GiB. With A100s the tree is a
// balanced one, without Hopper's 0.85 plain-tree factor, so at 128 KiB its LL (20.4 GB/s of bus bandwidth,
// 10.2 of algorithm bandwidth, × 0.5 for the size) takes 25.2 + 131072 / 5100 = 50.9 µs against LL128's
// 48.5 + 131072 / (80 · 0.6 · 1000) = 51.2 µs, and LL stays; with H100s LL takes 25.2 + 131072 / 4335 = 55.4.
TEST(MultiNicOps, AutoRunsWhatNcclsTunerPicksForTheGpu) {
  const std::string cluster = "--ranks 24 --gpus-per-node 8 --set cluster.intra_node_fabric=nvlink4-nvswitch "
                              "--set cluster.nics_per_node=8 --algorithm auto --protocol auto --fidelity analytic ";
  const auto variants = [&](const std::string& gpu) {
    const nlohmann::json rows = collective_json(cluster + gpu + " --sizes 64KiB:256KiB")["rows"];
    std::string out;
    for (const auto& row : rows) out += row["variant"].get<std::string>() + " ";
    out += collective_json(cluster + gpu + " --sizes 8GiB")["rows"][0]["variant"].get<std::string>();
    return out;
  };
  EXPECT_EQ(variants("--gpu h100-80gb"), "tree/ll tree/ll128 tree/ll128 ring/simple");
  EXPECT_EQ(variants("--gpu a100-80gb"), "tree/ll tree/ll tree/ll128 ring/simple");
  const std::string header = collective_json(cluster + "--gpu h100-80gb --sizes 8B")["collective"];
  EXPECT_NE(header.find("NCCL's tuner per size among ring and tree, seeing 3 nodes of 8 GPUs, Hopper, 8 channels "
                        "of 24 GB/s"),
            std::string::npos)
      << header;
}

}  // namespace
