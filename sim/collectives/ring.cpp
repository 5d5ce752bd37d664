// Ring allreduce, reduce-scatter and all-gather: every step, each rank sends one chunk to its successor
// and receives one from its predecessor.
#include <algorithm>
#include <stdexcept>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/plans.hpp"
#include "sim/collectives/registry.hpp"
#include "sim/config/cluster_layout.hpp"

namespace dtsim::sim {
namespace {

class RingSchedule final : public Schedule {
 public:
  RingSchedule(CollectiveKind kind, int members, uint64_t bytes, int ag_offset)
      : kind_(kind), n_(members), bytes_(bytes), ag_offset_(ag_offset) {}

  int size() const override { return n_; }
  int num_steps(int) const override { return n_ <= 1 ? 0 : phases() * (n_ - 1); }

  // Reduce-scatter step i: rank r passes on chunk r−i, after N−1 steps it owns the sum of chunk r+1.
  // All-gather step i: it passes on the complete chunk r+offset−i. Its predecessor sends, in the same
  // step, the chunk one lower, which is what r receives.
  Step step(int pos, int index) const override {
    const bool gathering = kind_ == CollectiveKind::AllGather || index >= n_ - 1;
    const int i = index % (n_ - 1);
    const int offset = kind_ == CollectiveKind::AllGather ? ag_offset_ : gathering ? 1 : 0;
    const int sent = mod(pos + offset - i);
    const int received = mod(sent - 1);
    Step s;
    s.send = {mod(pos + 1), chunk_bytes(bytes_, n_, sent)};
    s.recv = {mod(pos - 1), chunk_bytes(bytes_, n_, received)};
    return s;
  }

  double seconds(const AlphaBeta& link) const override {
    return closed_form_seconds(kind_, Algorithm::Ring, n_, bytes_, link);
  }

  uint64_t total_bytes() const override {
    return n_ <= 1 ? 0 : static_cast<uint64_t>(phases()) * static_cast<uint64_t>(n_ - 1) * bytes_;
  }

  // A rank passes on every chunk but the one it ends the phase with, so these are O(1).
  PeerTotals totals(int pos) const override {
    PeerTotals t;
    if (n_ <= 1) return t;
    uint64_t sent = 0, received = 0;
    if (kind_ != CollectiveKind::AllGather) {  // the reduce-scatter part
      sent += bytes_ - chunk_bytes(bytes_, n_, mod(pos + 1));
      received += bytes_ - chunk_bytes(bytes_, n_, pos);
    }
    if (kind_ != CollectiveKind::ReduceScatter) {  // the all-gather part
      const int offset = kind_ == CollectiveKind::AllGather ? ag_offset_ : 1;
      sent += bytes_ - chunk_bytes(bytes_, n_, mod(pos + offset + 1));
      received += bytes_ - chunk_bytes(bytes_, n_, mod(pos + offset));
    }
    t.sends.push_back({mod(pos + 1), sent});
    t.recvs.push_back({mod(pos - 1), received});
    return t;
  }

  double ring_chunk(int /*lane*/) const override {
    const bool ring = kind_ == CollectiveKind::Allreduce || kind_ == CollectiveKind::ReduceScatter ||
                      kind_ == CollectiveKind::AllGather;
    return ring && n_ > 1 ? static_cast<double>(bytes_) / n_ : 0.0;
  }

  int pattern_peer(int pos) const override { return n_ <= 1 ? -1 : mod(pos + 1); }
  uint64_t stepwise_flows() const override {
    return static_cast<uint64_t>(n_) * static_cast<uint64_t>(num_steps(0));
  }

 private:
  int phases() const { return kind_ == CollectiveKind::Allreduce ? 2 : 1; }
  int mod(int x) const { return ((x % n_) + n_) % n_; }

  CollectiveKind kind_;
  int n_;
  uint64_t bytes_;
  int ag_offset_;
};

}  // namespace

int ring_channels(const NodeRanks& nodes, const CollectiveOptions& options) {
  if (options.channels > 0) return options.channels;
  if (nodes.size() <= 1) return 1;
  int channels = 1;
  for (const auto& node : nodes)
    channels = std::max(channels, topology::nic_ports(static_cast<int>(node.size()), options.nics_per_node));
  return channels;
}

std::shared_ptr<const Schedule> make_ring_schedule(CollectiveKind kind, int members, uint64_t bytes, int ag_offset) {
  if (kind != CollectiveKind::Allreduce && kind != CollectiveKind::ReduceScatter && kind != CollectiveKind::AllGather)
    throw std::invalid_argument("the ring schedule does allreduce, reduce-scatter and all-gather only");
  if (members < 1) throw std::invalid_argument("a ring needs at least one member");
  return std::make_shared<RingSchedule>(kind, members, bytes, ag_offset);
}

// The ring algorithm: one phase of the ring, or for broadcast and reduce the pipelined chain along the
// ring order (chain.cpp).
AlgorithmImplementation ring_implementation() {
  AlgorithmImplementation ring;
  ring.algorithm = Algorithm::Ring;
  ring.plan = [](CollectiveKind kind, int ranks, const NodeRanks& nodes, uint64_t bytes,
                 const CollectiveOptions& options) {
    if (kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce)
      return single_group_plan(ranks,
                               make_chain_schedule(kind, ranks, bytes, options.root, pipeline_chunks(bytes, options)));
    const int channels = ring_channels(nodes, options);
    if (channels <= 1) return single_group_plan(ranks, make_ring_schedule(kind, ranks, bytes));
    NodeRanks layout = nodes;
    if (layout.empty())  // a flat group (hierarchical's inter-node step): every rank on its own
      for (int r = 0; r < ranks; ++r) layout.push_back({r});
    return single_group_plan(
        ranks, make_channel_ring_schedule(kind, channel_ring_orders(layout, options.nics_per_node, channels), bytes));
  };
  ring.misfit = nullptr;
  ring.closed_form = [](CollectiveKind kind, int ranks, uint64_t bytes, const AlphaBeta& link,
                        const CollectiveOptions& options) {
    const double n = ranks;
    const double s = static_cast<double>(bytes);
    const double a = link.alpha, b = link.bandwidth;
    switch (kind) {
      case CollectiveKind::Allreduce: return 2.0 * (n - 1) * (a + s / (n * b));
      case CollectiveKind::ReduceScatter:
      case CollectiveKind::AllGather: return (n - 1) * (a + s / (n * b));
      case CollectiveKind::Broadcast:
      case CollectiveKind::Reduce: {
        const double k = pipeline_chunks(bytes, options);
        return (n - 2 + k) * (a + s / (k * b));
      }
      case CollectiveKind::AllToAll: break;
    }
    throw std::invalid_argument("ring: unknown collective kind");
  };
  return ring;
}

}  // namespace dtsim::sim
