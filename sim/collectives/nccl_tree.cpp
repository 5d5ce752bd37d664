// NCCL's tree allreduce: inside each node the GPUs form a chain, and the nodes' first GPUs (the heads) form a
// double binary tree between nodes. Two trees carry half of the message each, pipelined in k chunks: the
// reduce sends every chunk up (along the chain to the head, then up the node tree to the root), the
// broadcast sends it back down. Tree 1 is the heap over node positions (children of p: 2p+1, 2p+2; node n
// at position n); tree 2 the same heap with node n at position M−1−n, so a node that forwards in one tree is
// a leaf of the other. `tree` runs it when some node holds several GPUs; with one GPU per node it runs the
// slot-scheduled double binary tree of double_binary_tree.cpp instead.
//
// Steps. A rank runs k+1 steps per half. Reduce step s: receive chunk s from each child, send chunk s−1 (which
// it completed in step s−1) to its parent. Broadcast step s: receive chunk s from the parent, send chunk s−1
// to each child. Each tree is a group of three lanes (the parent link shares lane 0 with the first child), so
// a rank's receives from its children run side by side and the step ends when all are done; the two trees are
// independent groups, as NCCL runs them on different channels.
//
// Channels. Each node's chain starts at its head, so the tree's traffic between nodes leaves through the head
// GPU's NIC. With C channels (collective.channels, or by default as many as a node has NIC ports, as for the
// ring), channel c carries a C-th of the message on its own pair of trees, whose chains are the node's GPUs
// rotated to start at GPU c·g/C: the channels cross the network through different NICs, in parallel.
//
// Time. Chunk 0 crosses the longest path to the root (its chain, g−1 intra-node hops, then D node hops,
// D = ⌊log2 M⌋); every later chunk follows one slowest hop later:
//   T(half) = (g−1)·c_intra + D·c_inter + (k−1)·max(c_intra, c_inter),  c = α + (S/2k)/B,
// for the reduce and the same for the broadcast, B being the share of a link the trees' flows get.
#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/plans.hpp"
#include "sim/collectives/registry.hpp"

namespace dtsim::sim {
namespace {

constexpr int kLanesPerTree = 3;  // a rank has at most three children: its chain successor and two heads

// Parents and children of every rank in both trees of one channel.
struct TreeShape {
  std::vector<int> parent[2];                // −1 for the root
  std::vector<std::vector<int>> children[2];  // chain successor first, then child heads
  int longest_chain = 1;                     // GPUs of the largest node
  int node_depth = 0;                        // D

  // Channel `channel` of `channels`: every node's chain rotated to start at its (channel·g/channels)-th GPU.
  TreeShape(const NodeRanks& original, int channel, int channels) : TreeShape(rotated(original, channel, channels)) {}

  static NodeRanks rotated(const NodeRanks& original, int channel, int channels) {
    NodeRanks nodes = original;
    for (auto& node : nodes) {
      const size_t g = node.size();
      if (g > 1) std::rotate(node.begin(), node.begin() + static_cast<std::ptrdiff_t>(channel * g / channels), node.end());
    }
    return nodes;
  }

  explicit TreeShape(const NodeRanks& nodes) {
    int n = 0;
    for (const auto& node : nodes) n += static_cast<int>(node.size());
    const int m = static_cast<int>(nodes.size());
    for (const auto& node : nodes) longest_chain = std::max(longest_chain, static_cast<int>(node.size()));
    node_depth = floor_log2(std::max(m, 1));
    for (int t = 0; t < 2; ++t) {
      parent[t].assign(static_cast<size_t>(n), -1);
      children[t].assign(static_cast<size_t>(n), {});
      const auto node_at = [&](int p) { return t == 0 ? p : m - 1 - p; };
      for (int p = 0; p < m; ++p) {
        const auto& node = nodes[node_at(p)];
        for (size_t j = 1; j < node.size(); ++j) {  // the chain towards the head
          parent[t][node[j]] = node[j - 1];
          children[t][node[j - 1]].push_back(node[j]);
        }
        if (p > 0) {
          const int head = node.front(), up = nodes[node_at((p - 1) / 2)].front();
          parent[t][head] = up;
          children[t][up].push_back(head);
        }
      }
    }
  }
};

class NcclTreeSchedule final : public Schedule {
 public:
  // One TreeShape per channel; the message split over them, each channel's part in two halves (one per tree).
  NcclTreeSchedule(std::vector<std::shared_ptr<const TreeShape>> shapes, uint64_t bytes, int chunks, bool broadcast)
      : shapes_(std::move(shapes)), k_(chunks), broadcast_(broadcast) {
    const uint64_t c = shapes_.size();
    for (uint64_t ch = 0; ch < c; ++ch) {
      const uint64_t part = bytes / c + (ch < bytes % c ? 1 : 0);
      halves_.push_back({part / 2, part - part / 2});
    }
  }

  int channels() const { return static_cast<int>(shapes_.size()); }
  int size() const override { return static_cast<int>(shapes_.front()->parent[0].size()); }
  int num_steps(int) const override { return size() <= 1 ? 0 : k_ + 1; }
  int lanes() const override { return channels() * 2 * kLanesPerTree; }
  int lane_group(int lane) const override { return lane / kLanesPerTree; }
  Step step(int pos, int index) const override { return lane_step(pos, index, 0); }

  Step lane_step(int pos, int s, int lane) const override {
    const int ch = lane / (2 * kLanesPerTree), t = (lane / kLanesPerTree) % 2, j = lane % kLanesPerTree;
    const TreeShape& shape = *shapes_[static_cast<size_t>(ch)];
    const std::vector<int>& kids = shape.children[t][pos];
    const int parent = shape.parent[t][pos];
    Step step;
    const auto chunk = [&](int c) { return chunk_bytes(halves_[static_cast<size_t>(ch)][t], k_, c); };
    const bool child_j = j < static_cast<int>(kids.size());
    if (!broadcast_) {
      if (child_j && s < k_) step.recv = {kids[j], chunk(s)};
      if (j == 0 && parent >= 0 && s >= 1) step.send = {parent, chunk(s - 1)};
    } else {
      if (j == 0 && parent >= 0 && s < k_) step.recv = {parent, chunk(s)};
      if (child_j && s >= 1) step.send = {kids[j], chunk(s - 1)};
    }
    return step;
  }

  double seconds(const AlphaBeta& link) const override { return seconds_by_level(link, link); }
  // The fidelities without transfers replay the steps (every hop at its own flow's latency and share);
  // seconds_by_level, the closed form above with each level's worst hop, is what is left beyond
  // kReplayMaxTransfers. Channels run side by side: the slowest tree of any channel.
  bool timed_by_replay() const override { return true; }
  bool timed_by_level() const override { return true; }
  double seconds_by_level(const AlphaBeta& intra, const AlphaBeta& inter) const override {
    if (size() <= 1) return 0.0;
    double worst = 0.0;
    for (size_t ch = 0; ch < shapes_.size(); ++ch) {
      const int chain_hops = shapes_[ch]->longest_chain - 1, node_hops = shapes_[ch]->node_depth;
      for (int t = 0; t < 2; ++t) {
        const double piece = static_cast<double>(chunk_bytes(halves_[ch][t], k_, 0));
        const double ci = intra.alpha + piece / intra.bandwidth, ce = inter.alpha + piece / inter.bandwidth;
        const double slowest = std::max(chain_hops > 0 ? ci : 0.0, node_hops > 0 ? ce : 0.0);
        worst = std::max(worst, chain_hops * ci + node_hops * ce + (k_ - 1) * slowest);
      }
    }
    return worst;
  }

  uint64_t total_bytes() const override {
    uint64_t message = 0;
    for (const auto& h : halves_) message += h[0] + h[1];
    return static_cast<uint64_t>(std::max(size() - 1, 0)) * message;
  }
  uint64_t stepwise_flows() const override {
    return 2 * static_cast<uint64_t>(channels()) * static_cast<uint64_t>(std::max(size() - 1, 0)) * k_;
  }

  // Reduce: a half to the parent, a half from each child; the broadcast the other way (every channel's).
  PeerTotals totals(int pos) const override {
    PeerTotals total;
    for (size_t ch = 0; ch < shapes_.size(); ++ch)
      for (int t = 0; t < 2; ++t) {
        const int parent = shapes_[ch]->parent[t][pos];
        if (parent >= 0) add_transfer(broadcast_ ? total.recvs : total.sends, {parent, halves_[ch][t]});
        for (const int child : shapes_[ch]->children[t][pos])
          add_transfer(broadcast_ ? total.sends : total.recvs, {child, halves_[ch][t]});
      }
    return total;
  }

  // A steady-state step: up to the parents (reduce) or down to the children (broadcast) of every tree.
  std::vector<int> pattern_peers(int pos) const override {
    std::vector<int> peers;
    for (const auto& shape : shapes_)
      for (int t = 0; t < 2; ++t) {
        if (!broadcast_ && shape->parent[t][pos] >= 0) peers.push_back(shape->parent[t][pos]);
        if (broadcast_)
          for (const int child : shape->children[t][pos]) peers.push_back(child);
      }
    return peers;
  }
  int pattern_peer(int pos) const override {
    const std::vector<int> peers = pattern_peers(pos);
    return peers.empty() ? -1 : peers.front();
  }

 private:
  std::vector<std::shared_ptr<const TreeShape>> shapes_;
  std::vector<std::array<uint64_t, 2>> halves_;
  int k_;
  bool broadcast_;
};

std::vector<std::shared_ptr<const TreeShape>> channel_shapes(const NodeRanks& nodes, int channels) {
  std::vector<std::shared_ptr<const TreeShape>> shapes;
  for (int c = 0; c < channels; ++c) shapes.push_back(std::make_shared<TreeShape>(nodes, c, channels));
  return shapes;
}

}  // namespace

std::shared_ptr<const Schedule> make_nccl_tree_schedule(const NodeRanks& nodes, uint64_t bytes, int chunks,
                                                        bool broadcast_half, int channels) {
  if (nodes.empty() || chunks < 1 || channels < 1)
    throw std::invalid_argument("NCCL tree: no nodes, or a bad chunk or channel count");
  return std::make_shared<NcclTreeSchedule>(channel_shapes(nodes, channels), bytes, chunks, broadcast_half);
}

// `tree`: NCCL's tree when some node holds several GPUs (two phases, each one group of every rank: the
// reduce half, then the broadcast half); with one GPU per node it is the double binary tree over all ranks,
// whose slot schedule (double_binary_tree.cpp) has an exact closed form on a star.
AlgorithmImplementation tree_implementation() {
  AlgorithmImplementation tree = double_binary_tree_implementation();
  tree.plan = [](CollectiveKind kind, int ranks, const NodeRanks& nodes, uint64_t bytes,
                 const CollectiveOptions& options) {
    const bool multi_gpu = std::any_of(nodes.begin(), nodes.end(), [](const auto& n) { return n.size() > 1; });
    if (!multi_gpu) return double_binary_tree_implementation().plan(kind, ranks, nodes, bytes, options);
    // As many channels as the ring's (a node's NIC ports, or collective.channels), each a C-th of the message.
    const int channels = ring_channels(nodes, options);
    const auto shapes = channel_shapes(nodes, channels);
    const uint64_t part = bytes / static_cast<uint64_t>(channels) + (bytes % static_cast<uint64_t>(channels) ? 1 : 0);
    const int chunks = pipeline_chunks(part - part / 2, options);
    Plan plan;
    for (const bool broadcast_half : {false, true})
      plan.phases.push_back(
          single_group_plan(ranks, std::make_shared<NcclTreeSchedule>(shapes, bytes, chunks, broadcast_half))
              .phases.front());
    return plan;
  };
  return tree;
}

}  // namespace dtsim::sim
