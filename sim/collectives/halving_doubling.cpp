// Rabenseifner's allreduce over p = 2^⌊log2 N⌋ ranks, with the N−p extra ranks folded in.
//
// Fold-in: for i < r = N−p, rank 2i sends its whole vector to rank 2i+1 and sits out; the p remaining ranks
// are renumbered v = 0..p−1 (rank 2i+1 → i, rank j ≥ 2r → j−r). Reduce-scatter by recursive halving: at
// step j (mask = p/2, p/4, …, 1) v exchanges with v XOR mask; both hold the same byte range, each keeps one
// half and sends the other. All-gather by recursive doubling retraces the steps in reverse, sending the range
// it holds and receiving its partner's. Fold-out: rank 2i+1 sends the result to rank 2i.
#include <stdexcept>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/plans.hpp"
#include "sim/collectives/registry.hpp"

namespace dtsim::sim {
namespace {

class HalvingDoublingSchedule final : public Schedule {
 public:
  HalvingDoublingSchedule(int members, uint64_t bytes) : n_(members), bytes_(bytes) {
    p_ = 1;
    while (p_ * 2 <= n_) p_ *= 2;
    extra_ = n_ - p_;
    for (int m = p_; m > 1; m /= 2) ++levels_;
  }

  int size() const override { return n_; }

  int num_steps(int pos) const override {
    if (n_ <= 1) return 0;
    if (sits_out(pos)) return 2;
    return 2 * levels_ + (pos < 2 * extra_ ? 2 : 0);
  }

  Step step(int pos, int index) const override {
    Step s;
    if (sits_out(pos)) {
      if (index == 0)
        s.send = {pos + 1, bytes_};
      else
        s.recv = {pos + 1, bytes_};
      return s;
    }
    const bool folds = pos < 2 * extra_;
    if (folds && index == 0) {
      s.recv = {pos - 1, bytes_};
      return s;
    }
    if (folds && index == 2 * levels_ + 1) {
      s.send = {pos - 1, bytes_};
      return s;
    }
    return core_step(virtual_rank(pos), index - (folds ? 1 : 0));
  }

  double seconds(const AlphaBeta& link) const override {
    return closed_form_seconds(CollectiveKind::Allreduce, Algorithm::HalvingDoubling, n_, bytes_, link);
  }

  int pattern_peer(int pos) const override {
    if (n_ <= 1 || sits_out(pos)) return -1;
    return real_rank(virtual_rank(pos) ^ (p_ / 2));  // the first core step: the largest distance
  }

  // Timed by replay: the partners of a step sit in the same node or not depending on the distance, which
  // no closed form of one link captures.
  bool timed_by_replay() const override { return true; }

 private:
  bool sits_out(int pos) const { return pos < 2 * extra_ && pos % 2 == 0; }
  int virtual_rank(int pos) const { return pos < 2 * extra_ ? pos / 2 : pos - extra_; }
  int real_rank(int v) const { return v < extra_ ? 2 * v + 1 : v + extra_; }

  // Core step c of virtual rank v: c < levels is halving step c, then doubling retraces them.
  Step core_step(int v, int c) const {
    // The byte range v holds before each halving step: the range is halved once per step, keeping the half
    // its bit selects (lower half when the bit is clear).
    uint64_t lo = 0, hi = bytes_;
    const int halving = c < levels_ ? c : 2 * levels_ - 1 - c;  // the halving step this one mirrors
    for (int j = 0; j < halving; ++j) narrow(v, p_ >> (j + 1), lo, hi);
    const int mask = p_ >> (halving + 1);
    const int partner = v ^ mask;
    uint64_t keep_lo = lo, keep_hi = hi;
    narrow(v, mask, keep_lo, keep_hi);
    const uint64_t kept = keep_hi - keep_lo;
    const uint64_t given = (hi - lo) - kept;
    Step s;
    if (c < levels_) {  // halving: send the half the partner keeps, receive the partner's part of mine
      s.send = {real_rank(partner), given};
      s.recv = {real_rank(partner), kept};
    } else {  // doubling: send my reduced half, receive the partner's
      s.send = {real_rank(partner), kept};
      s.recv = {real_rank(partner), given};
    }
    return s;
  }

  static void narrow(int v, int mask, uint64_t& lo, uint64_t& hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (v & mask)
      lo = mid;
    else
      hi = mid;
  }

  int n_;
  uint64_t bytes_;
  int p_ = 1;
  int extra_ = 0;
  int levels_ = 0;
};

}  // namespace

std::shared_ptr<const Schedule> make_halving_doubling_schedule(int members, uint64_t bytes) {
  if (members < 1) throw std::invalid_argument("halving-doubling needs at least one member");
  return std::make_shared<HalvingDoublingSchedule>(members, bytes);
}

AlgorithmImplementation halving_doubling_implementation() {
  AlgorithmImplementation hd;
  hd.algorithm = Algorithm::HalvingDoubling;
  hd.plan = [](CollectiveKind, int ranks, const NodeRanks&, uint64_t bytes, const CollectiveOptions&) {
    return single_group_plan(ranks, make_halving_doubling_schedule(ranks, bytes));
  };
  hd.misfit = nullptr;
  hd.closed_form = [](CollectiveKind, int ranks, uint64_t bytes, const AlphaBeta& link, const CollectiveOptions&) {
    const double s = static_cast<double>(bytes);
    const double a = link.alpha, b = link.bandwidth;
    int p = 1, levels = 0;
    while (p * 2 <= ranks) {
      p *= 2;
      ++levels;
    }
    const double fold = ranks == p ? 0.0 : 2.0 * (a + s / b);
    return 2.0 * levels * a + 2.0 * (p - 1) / p * s / b + fold;
  };
  return hd;
}

}  // namespace dtsim::sim
