// NCCL's channel rings: every channel is an order of all ranks that enters and leaves each node through the
// NIC it is meant to use, and the channels together use every NIC of a node in each direction.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/registry.hpp"

namespace dtsim::sim {
namespace {

std::vector<std::vector<int>> nodes_of(int node_count, int gpus) {
  std::vector<std::vector<int>> nodes(static_cast<size_t>(node_count));
  for (int k = 0; k < node_count; ++k)
    for (int j = 0; j < gpus; ++j) nodes[k].push_back(k * gpus + j);
  return nodes;
}

struct Shape {
  int nodes, gpus, nics;
};

TEST(ChannelRings, EveryChannelLeavesAndEntersNodesThroughItsNics) {
  for (const Shape s : {Shape{2, 8, 1}, Shape{2, 8, 2}, Shape{3, 8, 4}, Shape{4, 8, 8}, Shape{2, 4, 4}, Shape{5, 2, 2},
                        Shape{2, 6, 3}}) {
    const int per_nic = s.gpus / s.nics;
    const int n = s.nodes * s.gpus;
    const auto orders = channel_ring_orders(nodes_of(s.nodes, s.gpus), s.nics, s.nics);
    ASSERT_EQ(orders.size(), static_cast<size_t>(s.nics));
    // Per NIC (node, nic): the channels that leave through it and that enter through it.
    std::map<std::pair<int, int>, int> out_count, in_count;
    for (int c = 0; c < s.nics; ++c) {
      std::vector<int> sorted = orders[c];
      std::sort(sorted.begin(), sorted.end());
      std::vector<int> all(static_cast<size_t>(n));
      std::iota(all.begin(), all.end(), 0);
      ASSERT_EQ(sorted, all) << "channel " << c << " is not an order of all ranks";
      for (int i = 0; i < n; ++i) {
        const int from = orders[c][i], to = orders[c][(i + 1) % n];
        const int from_node = from / s.gpus, to_node = to / s.gpus;
        if (from_node == to_node) continue;
        const int out_nic = (from % s.gpus) / per_nic, in_nic = (to % s.gpus) / per_nic;
        ++out_count[{from_node, out_nic}];
        ++in_count[{to_node, in_nic}];
        // Several GPUs per NIC: NIC c to NIC c, on one rail. One GPU per NIC: out through NIC c+1.
        EXPECT_EQ(in_nic, c % s.nics) << s.nodes << "x" << s.gpus << "/" << s.nics << " channel " << c;
        EXPECT_EQ(out_nic, per_nic >= 2 || s.nics == 1 ? c % s.nics : (c + 1) % s.nics);
      }
      // Inside a node a channel visits every GPU of it once, in one stretch.
      for (int k = 0; k < s.nodes; ++k) {
        int stretches = 0;
        for (int i = 0; i < n; ++i)
          if (orders[c][i] / s.gpus == k && orders[c][(i + n - 1) % n] / s.gpus != k) ++stretches;
        EXPECT_EQ(stretches, s.nodes > 1 ? 1 : 0);
      }
    }
    if (s.nodes > 1)
      for (int k = 0; k < s.nodes; ++k)
        for (int nic = 0; nic < s.nics; ++nic) {
          EXPECT_EQ((out_count[{k, nic}]), 1) << "every NIC carries one channel out";
          EXPECT_EQ((in_count[{k, nic}]), 1) << "every NIC carries one channel in";
        }
  }
}

TEST(ChannelRings, ScheduleSplitsTheMessageBetweenChannels) {
  const auto orders = channel_ring_orders(nodes_of(2, 4), 2, 2);
  const uint64_t bytes = 1000003;  // not divisible: channels and chunks differ by at most a byte
  const auto ring = make_channel_ring_schedule(CollectiveKind::Allreduce, orders, bytes);
  EXPECT_EQ(ring->lanes(), 2);
  EXPECT_EQ(ring->num_steps(0), 2 * 7);
  EXPECT_EQ(ring->total_bytes(), 2u * 7u * bytes);  // 2(N−1)·S, as one ring
  uint64_t walked = 0;
  for (int pos = 0; pos < 8; ++pos)
    for (int i = 0; i < ring->num_steps(pos); ++i)
      for (int lane = 0; lane < 2; ++lane) {
        const Step s = ring->lane_step(pos, i, lane);
        ASSERT_TRUE(s.send.active());
        // The peer is the member's successor in that lane's order.
        const auto& order = orders[lane];
        const auto at = std::find(order.begin(), order.end(), pos) - order.begin();
        EXPECT_EQ(s.send.peer, order[(at + 1) % 8]);
        EXPECT_EQ(s.recv.peer, order[(at + 7) % 8]);
        walked += s.send.bytes;
      }
  EXPECT_EQ(walked, ring->total_bytes());
  EXPECT_EQ(ring->stepwise_flows(), 2u * 8u * 14u);
}

TEST(ChannelRings, ChannelCountFollowsTheNics) {
  CollectiveOptions o;
  o.nics_per_node = 4;
  EXPECT_EQ(ring_channels(nodes_of(2, 8), o), 4);
  EXPECT_EQ(ring_channels(nodes_of(1, 8), o), 1) << "one node: its NICs carry nothing";
  EXPECT_EQ(ring_channels({}, o), 1) << "a flat group";
  o.channels = 3;
  EXPECT_EQ(ring_channels(nodes_of(2, 8), o), 3);
}

// A GPU that owns several NICs has them bonded into one port: one channel per port, so a single-GPU node
// gets one ring (a ring per NIC would only split the message over the same port), and 2 GPUs with 4 NICs
// get 2 channels, each entering through one GPU's port and leaving through the other's.
TEST(ChannelRings, BondedNicsAreOnePortAndOneChannel) {
  CollectiveOptions o;
  o.nics_per_node = 4;
  EXPECT_EQ(ring_channels(nodes_of(4, 1), o), 1);
  EXPECT_EQ(ring_channels(nodes_of(4, 2), o), 2);
  EXPECT_EQ(ring_channels(nodes_of(4, 4), o), 4);
  EXPECT_EQ(ring_channels({{0}, {1, 2, 3, 4}}, o), 4) << "groups of nodes: the most ports any node has";
  const auto orders = channel_ring_orders(nodes_of(2, 2), 4, 2);
  ASSERT_EQ(orders.size(), 2u);
  EXPECT_EQ(orders[0], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(orders[1], (std::vector<int>{1, 0, 3, 2}));
  EXPECT_EQ(channel_ring_orders(nodes_of(3, 1), 4, 1), (std::vector<std::vector<int>>{{0, 1, 2}}));
}

}  // namespace
}  // namespace dtsim::sim
