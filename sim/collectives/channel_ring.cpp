// NCCL's rings across nodes: several channels, each a ring over every rank that enters and leaves each node
// through a NIC of its own, so that together they use every NIC of a node. The message is split between the
// channels and each runs the ring algorithm on its part (ring.cpp) along its own order of the ranks.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/closed_form.hpp"
#include "sim/config/cluster_layout.hpp"

namespace dtsim::sim {
namespace {

class ChannelRingSchedule final : public Schedule {
 public:
  ChannelRingSchedule(CollectiveKind kind, std::vector<std::vector<int>> orders, uint64_t bytes)
      : orders_(std::move(orders)) {
    const int n = static_cast<int>(orders_.front().size());
    const int channels = static_cast<int>(orders_.size());
    index_.assign(orders_.size(), std::vector<int>(static_cast<size_t>(n), -1));
    for (int c = 0; c < channels; ++c) {
      if (static_cast<int>(orders_[c].size()) != n) throw std::invalid_argument("channel rings differ in size");
      for (int i = 0; i < n; ++i) index_[c][orders_[c][i]] = i;
      rings_.push_back(make_ring_schedule(kind, n, chunk_bytes(bytes, channels, c)));
    }
  }

  int size() const override { return static_cast<int>(orders_.front().size()); }
  int num_steps(int) const override { return rings_.front()->num_steps(0); }
  int lanes() const override { return static_cast<int>(orders_.size()); }
  Step step(int pos, int index) const override { return lane_step(pos, index, 0); }

  // The ring's step at the member's place in this channel's order, its peers mapped back to members.
  Step lane_step(int pos, int index, int lane) const override {
    Step s = rings_[lane]->step(index_[lane][pos], index);
    if (s.send.active()) s.send.peer = orders_[lane][s.send.peer];
    if (s.recv.active()) s.recv.peer = orders_[lane][s.recv.peer];
    return s;
  }

  // The channels run side by side; the first carries the largest part.
  double seconds(const AlphaBeta& link) const override { return rings_.front()->seconds(link); }

  double ring_chunk(int lane) const override { return rings_[lane]->ring_chunk(0); }
  // Channels drift apart as each runs at its own pace (run_lanes), so the share of a GPU's links each one
  // gets varies over the call: no fixed share per hop times them exactly; a replay does.
  bool timed_by_replay() const override { return lanes() > 1; }

  uint64_t total_bytes() const override {
    uint64_t total = 0;
    for (const auto& ring : rings_) total += ring->total_bytes();
    return total;
  }

  PeerTotals totals(int pos) const override {
    PeerTotals t;
    for (int c = 0; c < lanes(); ++c) {
      const PeerTotals ring = rings_[c]->totals(index_[c][pos]);
      for (Transfer x : ring.sends) add_transfer(t.sends, {orders_[c][x.peer], x.bytes});
      for (Transfer x : ring.recvs) add_transfer(t.recvs, {orders_[c][x.peer], x.bytes});
    }
    return t;
  }

  int pattern_peer(int pos) const override { return pattern_peers(pos).empty() ? -1 : pattern_peers(pos).front(); }
  std::vector<int> pattern_peers(int pos) const override {
    std::vector<int> peers;
    for (int c = 0; c < lanes(); ++c) {
      const int peer = rings_[c]->pattern_peer(index_[c][pos]);
      if (peer >= 0) peers.push_back(orders_[c][peer]);
    }
    return peers;
  }

  uint64_t stepwise_flows() const override {
    uint64_t flows = 0;
    for (const auto& ring : rings_) flows += ring->stepwise_flows();
    return flows;
  }

 private:
  std::vector<std::vector<int>> orders_;  // [channel][i]: the member at place i of the channel's ring
  std::vector<std::vector<int>> index_;   // [channel][member]: its place in that ring
  std::vector<std::shared_ptr<const Schedule>> rings_;
};

// The order in which channel c visits the g GPUs (local indices) of a node with m ports into the network
// (NICs, or one bonded port per GPU: topology::nic_ports), g/m GPUs on each.
// It enters at a GPU of NIC e = c mod m and leaves from a GPU whose route out takes NIC e too (the last GPU
// on that NIC), so consecutive nodes talk NIC e to NIC e, on one rail. With one GPU per NIC that is not
// possible: the ring leaves from the GPU of NIC e+1 instead, so each NIC still carries one channel each way.
std::vector<int> local_order(int g, int m, int c) {
  if (g <= 1 || m <= 1) {
    std::vector<int> order(static_cast<size_t>(g));
    for (int i = 0; i < g; ++i) order[i] = i;
    return order;
  }
  const int per_nic = g / m;
  const int e = c % m;
  std::vector<int> order;
  if (per_nic >= 2) {
    order.push_back(e * per_nic);
    for (int k = 1; k < m; ++k) {
      const int slice = (e + k) % m;
      for (int j = 0; j < per_nic; ++j) order.push_back(slice * per_nic + j);
    }
    for (int j = 1; j < per_nic; ++j) order.push_back(e * per_nic + j);
  } else {
    order.push_back(e);
    for (int k = 2; k < g; ++k) order.push_back((e + k) % g);
    order.push_back((e + 1) % g);
  }
  return order;
}

}  // namespace

std::vector<std::vector<int>> channel_ring_orders(const std::vector<std::vector<int>>& nodes, int nics_per_node,
                                                  int channels) {
  std::vector<std::vector<int>> orders(static_cast<size_t>(channels));
  for (int c = 0; c < channels; ++c)
    for (const auto& node : nodes) {
      const int g = static_cast<int>(node.size());
      const int m = topology::nic_ports(g, nics_per_node);
      for (const int local : local_order(g, m, c)) orders[c].push_back(node[local]);
    }
  return orders;
}

std::shared_ptr<const Schedule> make_channel_ring_schedule(CollectiveKind kind, std::vector<std::vector<int>> orders,
                                                           uint64_t bytes) {
  if (kind != CollectiveKind::Allreduce && kind != CollectiveKind::ReduceScatter && kind != CollectiveKind::AllGather)
    throw std::invalid_argument("channel rings do allreduce, reduce-scatter and all-gather only");
  if (orders.empty() || orders.front().empty()) throw std::invalid_argument("channel rings need members");
  return std::make_shared<ChannelRingSchedule>(kind, std::move(orders), bytes);
}

}  // namespace dtsim::sim
