// All-to-all as NCCL runs it: every rank sends its block for each other rank and receives theirs, all at
// once (a group of point-to-point sends and receives), so a rank's links share its N−1 flows. The schedule
// is one step of N−1 lanes; block b of the buffer (S/N bytes) goes to rank b.
#include <stdexcept>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/plans.hpp"
#include "sim/collectives/registry.hpp"

namespace dtsim::sim {
namespace {

class DirectSchedule final : public Schedule {
 public:
  DirectSchedule(int members, uint64_t bytes) : n_(members), bytes_(bytes) {}

  int size() const override { return n_; }
  int num_steps(int) const override { return n_ <= 1 ? 0 : 1; }
  int lanes() const override { return n_ <= 1 ? 1 : n_ - 1; }
  Step step(int pos, int index) const override { return lane_step(pos, index, 0); }

  // Lane l: the block for rank pos+l+1 out, the block of rank pos−l−1 in.
  Step lane_step(int pos, int, int lane) const override {
    Step s;
    if (n_ <= 1) return s;
    const int to = (pos + lane + 1) % n_;
    const int from = ((pos - lane - 1) % n_ + n_) % n_;
    s.send = {to, chunk_bytes(bytes_, n_, to)};
    s.recv = {from, chunk_bytes(bytes_, n_, pos)};
    return s;
  }

  // `link` as the executor measures it: each flow's share of its links, with the N−1 flows of every rank
  // under way together.
  double seconds(const AlphaBeta& link) const override {
    if (n_ <= 1) return 0.0;
    return link.alpha + static_cast<double>(chunk_bytes(bytes_, n_, 0)) / link.bandwidth;
  }

  uint64_t total_bytes() const override {
    uint64_t total = 0;
    for (int b = 0; b < n_; ++b) total += static_cast<uint64_t>(n_ - 1) * chunk_bytes(bytes_, n_, b);
    return total;
  }

  std::vector<int> pattern_peers(int pos) const override {
    std::vector<int> peers;
    for (int lane = 0; lane + 1 < n_; ++lane) peers.push_back((pos + lane + 1) % n_);
    return peers;
  }
  int pattern_peer(int pos) const override { return n_ <= 1 ? -1 : (pos + 1) % n_; }
  uint64_t stepwise_flows() const override { return static_cast<uint64_t>(n_) * (n_ <= 1 ? 0 : n_ - 1); }

 private:
  int n_;
  uint64_t bytes_;
};

}  // namespace

std::shared_ptr<const Schedule> make_direct_schedule(int members, uint64_t bytes) {
  if (members < 1) throw std::invalid_argument("an all-to-all needs at least one member");
  return std::make_shared<DirectSchedule>(members, bytes);
}

AlgorithmImplementation direct_implementation() {
  AlgorithmImplementation direct;
  direct.algorithm = Algorithm::Direct;
  direct.plan = [](CollectiveKind, int ranks, const NodeRanks&, uint64_t bytes, const CollectiveOptions&) {
    return single_group_plan(ranks, make_direct_schedule(ranks, bytes));
  };
  direct.misfit = nullptr;
  // On a contention-free fabric a rank's own link carries its N−1 blocks of S/N at once.
  direct.closed_form = [](CollectiveKind, int ranks, uint64_t bytes, const AlphaBeta& link, const CollectiveOptions&) {
    const double n = ranks;
    return link.alpha + (n - 1) * (static_cast<double>(bytes) / n) / link.bandwidth;
  };
  return direct;
}

}  // namespace dtsim::sim
