// Broadcast and reduce as a pipelined chain along the ring order starting at the root. With k chunks of
// S/k bytes, the rank at distance q from the root handles chunk c in round q + c (broadcast), so the last
// rank holds the last chunk after N−2+k rounds of α + S/(k·B). Reduce is the same chain run backwards:
// the farthest rank starts, each rank adds its contribution and passes the chunk on towards the root.
#include <algorithm>
#include <stdexcept>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/closed_form.hpp"

namespace dtsim::sim {
namespace {

class ChainSchedule final : public Schedule {
 public:
  ChainSchedule(CollectiveKind kind, int members, uint64_t bytes, int root, int chunks)
      : kind_(kind), n_(members), bytes_(bytes), root_(root), k_(chunks) {}

  int size() const override { return n_; }

  // In chain order (q = distance from the data's source end): the first rank sends k chunks, the last
  // receives k, every rank between them receives chunk 0, then k−1 times receives chunk c while passing on
  // chunk c−1, then passes on the last chunk: k+1 steps.
  int num_steps(int pos) const override {
    if (n_ <= 1) return 0;
    const int q = order(pos);
    return q == 0 || q == n_ - 1 ? k_ : k_ + 1;
  }

  Step step(int pos, int index) const override {
    const int q = order(pos);
    Step s;
    if (q == 0) {
      s.send = {at(q + 1), chunk_bytes(bytes_, k_, index)};
    } else if (q == n_ - 1) {
      s.recv = {at(q - 1), chunk_bytes(bytes_, k_, index)};
    } else {
      if (index < k_) s.recv = {at(q - 1), chunk_bytes(bytes_, k_, index)};
      if (index > 0) s.send = {at(q + 1), chunk_bytes(bytes_, k_, index - 1)};
    }
    return s;
  }

  // Replayed where the closed form's one α and B do not hold (hops inside and across nodes).
  bool timed_by_replay() const override { return true; }

  double seconds(const AlphaBeta& link) const override {
    CollectiveOptions o;
    o.pipeline_chunk_bytes = 1;  // exactly k_ chunks: k_ ≤ max(bytes, 1) by construction
    o.max_pipeline_chunks = k_;
    return closed_form_seconds(kind_, Algorithm::Ring, n_, bytes_, link, o);
  }

  uint64_t total_bytes() const override { return n_ <= 1 ? 0 : static_cast<uint64_t>(n_ - 1) * bytes_; }
  uint64_t stepwise_flows() const override { return n_ <= 1 ? 0 : static_cast<uint64_t>(n_ - 1) * k_; }

 private:
  // A broadcast flows root → root+1 → …; a reduce flows root+N−1 → … → root+1 → root. q counts from the
  // end the data starts at.
  int order(int pos) const {
    const int from_root = ((pos - root_) % n_ + n_) % n_;
    return kind_ == CollectiveKind::Broadcast ? from_root : (n_ - 1 - from_root);
  }
  int at(int q) const {
    const int from_root = kind_ == CollectiveKind::Broadcast ? q : n_ - 1 - q;
    return (root_ + from_root) % n_;
  }

  CollectiveKind kind_;
  int n_;
  uint64_t bytes_;
  int root_;
  int k_;
};

}  // namespace

std::shared_ptr<const Schedule> make_chain_schedule(CollectiveKind kind, int members, uint64_t bytes, int root,
                                                    int chunks) {
  if (kind != CollectiveKind::Broadcast && kind != CollectiveKind::Reduce)
    throw std::invalid_argument("the chain schedule does broadcast and reduce only");
  if (members < 1 || root < 0 || root >= members || chunks < 1)
    throw std::invalid_argument("chain schedule: bad members, root or chunk count");
  return std::make_shared<ChainSchedule>(kind, members, bytes, root, chunks);
}

}  // namespace dtsim::sim
