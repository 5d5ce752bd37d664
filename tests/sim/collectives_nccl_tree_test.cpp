// NCCL's tree on multi-GPU nodes: a chain inside every node, a double binary tree of the nodes' first GPUs,
// and its time as the longest path plus one slowest hop per further chunk.
#include <gtest/gtest.h>

#include <vector>

#include "sim/collectives/algorithms.hpp"

namespace dtsim::sim {
namespace {

TEST(NcclTree, ChainsInsideNodesAndADoubleBinaryTreeOfHeads) {
  // 4 nodes of 3 GPUs: ranks 0–2, 3–5, 6–8, 9–11; heads 0, 3, 6, 9.
  const std::vector<std::vector<int>> nodes = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}};
  const auto reduce = make_nccl_tree_schedule(nodes, 1 << 20, 1, false);
  // In the reduce a rank sends its chunk to its parent in step 1 (lane 0 is tree 1's, lane 3 tree 2's).
  std::vector<int> parent[2];
  for (int t = 0; t < 2; ++t)
    for (int r = 0; r < 12; ++r) {
      const Step s = reduce->lane_step(r, 1, 3 * t);
      parent[t].push_back(s.send.active() ? s.send.peer : -1);
    }
  for (int t = 0; t < 2; ++t)
    for (const auto& node : nodes) {  // the chain towards the node's first GPU, in both trees
      EXPECT_EQ(parent[t][node[1]], node[0]);
      EXPECT_EQ(parent[t][node[2]], node[1]);
    }
  // Heads: tree 1 is the heap over nodes 0..3 (root 0; 1 and 2 under 0; 3 under 1); tree 2 mirrors it
  // (root node 3; 2 and 1 under 3; 0 under 2).
  EXPECT_EQ((std::vector<int>{parent[0][0], parent[0][3], parent[0][6], parent[0][9]}), (std::vector<int>{-1, 0, 0, 3}));
  EXPECT_EQ((std::vector<int>{parent[1][0], parent[1][3], parent[1][6], parent[1][9]}), (std::vector<int>{6, 9, 9, -1}));
  // Each half goes to a parent once and comes from each child once: (N−1)·S per phase.
  EXPECT_EQ(reduce->total_bytes(), 11u * (1u << 20));
  EXPECT_EQ(reduce->lanes(), 6);
  EXPECT_EQ(reduce->lane_group(2), 0);
  EXPECT_EQ(reduce->lane_group(3), 1);
  // A head receives from its chain successor and its child heads in the same step, each in its own lane.
  const Step from_chain = reduce->lane_step(0, 0, 0), from_head = reduce->lane_step(0, 0, 1);
  EXPECT_EQ(from_chain.recv.peer, 1);
  EXPECT_EQ(from_head.recv.peer, 3);
}

TEST(NcclTree, TimeIsTheLongestPathPlusOneSlowestHopPerChunk) {
  // 2 nodes of 4 GPUs: the longest path is 3 chain hops and 1 node hop.
  const auto reduce = make_nccl_tree_schedule({{0, 1, 2, 3}, {4, 5, 6, 7}}, 8 << 20, 4, false);
  const AlphaBeta intra{1e-6, 100e9}, inter{5e-6, 10e9};
  const double chunk = (8 << 20) / 2.0 / 4;
  const double ci = intra.alpha + chunk / intra.bandwidth, ce = inter.alpha + chunk / inter.bandwidth;
  EXPECT_NEAR(reduce->seconds_by_level(intra, inter), 3 * ci + 1 * ce + 3 * ce, 1e-15);
  // One node: the chain alone, g − 2 + k hops as a pipelined chain.
  const auto chain = make_nccl_tree_schedule({{0, 1, 2, 3}}, 8 << 20, 4, true);
  EXPECT_NEAR(chain->seconds_by_level(intra, inter), (4 - 2 + 4) * ci, 1e-15);
}

// Channels: each carries a C-th of the message on its own pair of trees, whose chains start at the nodes'
// (c·g/C)-th GPU, so the channels leave every node through different GPUs' NICs.
TEST(NcclTree, ChannelsSplitTheMessageAndRotateTheHeads) {
  const std::vector<std::vector<int>> nodes = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  const auto reduce = make_nccl_tree_schedule(nodes, 1 << 20, 1, false, 2);
  EXPECT_EQ(reduce->lanes(), 12);  // 2 channels × 2 trees × 3 lanes
  EXPECT_EQ(reduce->lane_group(6), 2);
  // Channel 1 (lanes 6–11): chains 2→3→0→1 and 6→7→4→5, heads 2 and 6. In tree 1 node 1's head sends to
  // node 0's; each transfer is a quarter of the message (half of the channel's half).
  const Step head_up = reduce->lane_step(6, 1, 6);
  EXPECT_EQ(head_up.send.peer, 2);
  EXPECT_EQ(head_up.send.bytes, (1u << 20) / 4);
  EXPECT_EQ(reduce->lane_step(3, 1, 6).send.peer, 2);  // the chain towards the head
  EXPECT_EQ(reduce->lane_step(1, 1, 6).send.peer, 0);
  EXPECT_EQ(reduce->lane_step(2, 1, 6).send.active(), false);  // channel 1's root in tree 1
  // Channel 0 keeps the first GPUs as heads.
  EXPECT_EQ(reduce->lane_step(4, 1, 0).send.peer, 0);
  EXPECT_EQ(reduce->total_bytes(), 7u * (1u << 20));  // (N − 1)·S, as with one channel
  // In time, the channels run side by side: one channel's path with a quarter of the message per tree.
  const AlphaBeta intra{1e-6, 100e9}, inter{5e-6, 10e9};
  const double piece = (1 << 20) / 4.0;
  const double ci = intra.alpha + piece / intra.bandwidth, ce = inter.alpha + piece / inter.bandwidth;
  EXPECT_NEAR(reduce->seconds_by_level(intra, inter), 3 * ci + 1 * ce, 1e-15);
}

}  // namespace
}  // namespace dtsim::sim
