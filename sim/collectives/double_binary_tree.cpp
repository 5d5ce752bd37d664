// The double binary tree allreduce (after NCCL's): two binary trees over the same ranks, each reducing then
// broadcasting half of the message, pipelined in k chunks of S/(2k) bytes.
//
// Trees. Tree 1 is the heap over positions 0..N−1 (children of p: 2p+1 and 2p+2; rank r at position r);
// tree 2 is the same heap with rank r at position N−1−r. Heap positions ≥ ⌊N/2⌋ are leaves, so the inner
// ranks of tree 1 (r < ⌊N/2⌋) are leaves of tree 2 and vice versa: every rank forwards for one tree only.
//
// Slots. Everything happens in numbered slots, each one transfer of one chunk over a link. With D = ⌊log2 N⌋
// the depth of the deepest leaf, d the depth of a rank and par its parity (tree 1: r mod 2, tree 2: the
// opposite), a rank sends chunk c of the reduce to its parent in slot 2(c + D − d) + par, and receives chunk c
// of the broadcast from its parent in slot R + 2(c + d − 1) + par, R = 2k + 2D − 2 being the reduce's length.
// Siblings have different parities and a rank's two parities differ, so in any slot a rank sends at most one
// chunk and receives at most one: the schedule is contention-free on a star, each slot costs α + S/(2k·B).
//
// The ranks run their slots in order without waiting for empty ones, so the time is the critical path of
// this data flow, L(N, k) slots (computed below). Per-rank traffic in steady state is one chunk in and one
// out per slot: S/B for the reduce and S/B for the broadcast, as for the ring at large N.
#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/plans.hpp"
#include "sim/collectives/registry.hpp"

namespace dtsim::sim {
namespace {

struct SlotStep {
  int slot;
  Step step;
};

// Every rank's steps, in slot order.
std::vector<std::vector<SlotStep>> build_slot_steps(int n, uint64_t bytes, int k) {
  std::vector<std::vector<SlotStep>> steps(n);
  if (n <= 1) return steps;
  const int depth_max = floor_log2(n);
  const int reduce_slots = 2 * k + 2 * depth_max - 2;
  const uint64_t halves[2] = {bytes / 2, bytes - bytes / 2};
  const auto add = [&](int rank, int slot, bool send, int peer, uint64_t size) {
    SlotStep s{slot, {}};
    (send ? s.step.send : s.step.recv) = {peer, size};
    steps[rank].push_back(s);
  };
  for (int tree = 0; tree < 2; ++tree) {
    const auto rank_at = [&](int p) { return tree == 0 ? p : n - 1 - p; };
    const auto parity = [&](int r) { return tree == 0 ? (r & 1) : 1 - (r & 1); };
    for (int p = 1; p < n; ++p) {  // every edge, child p → parent (p−1)/2
      const int child = rank_at(p), parent = rank_at((p - 1) / 2);
      const int d = floor_log2(p + 1);
      for (int c = 0; c < k; ++c) {
        const uint64_t size = chunk_bytes(halves[tree], k, c);
        const int up = 2 * (c + depth_max - d) + parity(child);
        const int down = reduce_slots + 2 * (c + d - 1) + parity(child);
        add(child, up, true, parent, size);
        add(parent, up, false, child, size);
        add(parent, down, true, child, size);
        add(child, down, false, parent, size);
      }
    }
  }
  // One step per slot: a slot holds at most one send and one receive of a rank (see the parities above).
  for (auto& list : steps) {
    std::stable_sort(list.begin(), list.end(), [](const SlotStep& a, const SlotStep& b) { return a.slot < b.slot; });
    std::vector<SlotStep> merged;
    for (const SlotStep& s : list) {
      if (!merged.empty() && merged.back().slot == s.slot) {
        if (s.step.send.active()) merged.back().step.send = s.step.send;
        if (s.step.recv.active()) merged.back().step.recv = s.step.recv;
      } else {
        merged.push_back(s);
      }
    }
    list = std::move(merged);
  }
  return steps;
}

// The data-flow critical path with every transfer one time unit: a rank starts a step when its previous one
// ended; a transfer starts when both ends have started their steps.
int critical_path_rounds(const std::vector<std::vector<SlotStep>>& steps) {
  const int n = static_cast<int>(steps.size());
  int last_slot = -1;
  for (const auto& s : steps)
    if (!s.empty()) last_slot = std::max(last_slot, s.back().slot);
  std::vector<std::vector<std::pair<int, int>>> at_slot(last_slot + 1);  // (rank, index of its step)
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < steps[r].size(); ++i) at_slot[steps[r][i].slot].push_back({r, static_cast<int>(i)});
  std::vector<int> ready(n, 0), start(n, 0), end(n, 0);
  int finish = 0;
  for (const auto& active : at_slot) {
    for (const auto& [r, i] : active) start[r] = end[r] = ready[r];
    for (const auto& [r, i] : active) {
      const Transfer& send = steps[r][i].step.send;
      if (!send.active()) continue;
      const int done = std::max(start[r], start[send.peer]) + 1;
      end[r] = std::max(end[r], done);
      end[send.peer] = std::max(end[send.peer], done);
    }
    for (const auto& [r, i] : active) {
      ready[r] = end[r];
      finish = std::max(finish, end[r]);
    }
  }
  return finish;
}

// Critical-path rounds of the reduce half alone (slots < R), cached like the whole's.
int reduce_rounds(int ranks, int chunks) {
  if (ranks <= 1) return 0;
  static std::map<std::pair<int, int>, int> cache;
  const auto key = std::make_pair(ranks, chunks);
  const auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  auto steps = build_slot_steps(ranks, 0, chunks);
  const int reduce_slots = 2 * chunks + 2 * floor_log2(ranks) - 2;
  for (auto& s : steps)
    s.erase(std::remove_if(s.begin(), s.end(), [&](const SlotStep& x) { return x.slot >= reduce_slots; }), s.end());
  const int rounds = critical_path_rounds(steps);
  cache.emplace(key, rounds);
  return rounds;
}

// The two trees as rank relations (tree 0: rank r at heap position r; tree 1: at position N−1−r).
struct Trees {
  int n;
  int position(int tree, int r) const { return tree == 0 ? r : n - 1 - r; }
  int rank_at(int tree, int p) const { return tree == 0 ? p : n - 1 - p; }
  int parent(int tree, int r) const {
    const int p = position(tree, r);
    return p == 0 ? -1 : rank_at(tree, (p - 1) / 2);
  }
  std::vector<int> children(int tree, int r) const {
    std::vector<int> c;
    for (const int q : {2 * position(tree, r) + 1, 2 * position(tree, r) + 2})
      if (q < n) c.push_back(rank_at(tree, q));
    return c;
  }
  // The parity of the slots in which r sends to its parent (reduce) and receives from it (broadcast).
  int parity(int tree, int r) const { return tree == 0 ? (r & 1) : 1 - (r & 1); }
};

// One half of the schedule: the reduce (slots < R) or the broadcast (slots ≥ R). A rank runs them back to back
// exactly as the whole, so stepwise times are the whole's; splitting lets the aggregated fidelity give each
// half its own flows, whose link loads are then uniform (two chunks' worth in, two out, per rank). The steps
// are built only when the stepwise fidelity asks for them; everything else is computed from the trees.
class DoubleBinaryTreeSchedule final : public Schedule {
 public:
  DoubleBinaryTreeSchedule(int members, uint64_t bytes, int chunks, bool broadcast_half)
      : n_(members), bytes_(bytes), k_(chunks), broadcast_(broadcast_half), trees_{members} {
    int senders[2] = {0, 0};
    for (int parity = 0; parity < 2; ++parity)
      for (int r = 0; r < n_; ++r) senders[parity] += sender_in_slot_of_parity(parity, r) >= 0 ? 1 : 0;
    pattern_parity_ = senders[1] > senders[0] ? 1 : 0;
  }

  int size() const override { return n_; }
  int num_steps(int pos) const override { return static_cast<int>(steps()[pos].size()); }
  Step step(int pos, int index) const override { return steps()[pos][index].step; }

  // The whole takes L(N,k) rounds; the reduce half alone takes Lr, the broadcast half is charged the rest
  // (the halves overlap by a round or two where ranks finish the reduce early).
  double seconds(const AlphaBeta& link) const override {
    if (n_ <= 1) return 0.0;
    const double round = link.alpha + static_cast<double>(bytes_) / (2.0 * k_ * link.bandwidth);
    const int reduce = reduce_rounds(n_, k_);
    return (broadcast_ ? double_binary_tree_rounds(n_, k_) - reduce : reduce) * round;
  }
  uint64_t total_bytes() const override { return n_ <= 1 ? 0 : static_cast<uint64_t>(n_ - 1) * bytes_; }
  uint64_t stepwise_flows() const override { return n_ <= 1 ? 0 : 2 * static_cast<uint64_t>(n_ - 1) * k_; }

  // Reduce: the whole half goes to each parent and comes from each child; the broadcast the other way.
  PeerTotals totals(int pos) const override {
    PeerTotals t;
    for (int tree = 0; tree < 2; ++tree) {
      const uint64_t half = tree == 0 ? bytes_ / 2 : bytes_ - bytes_ / 2;
      const int parent = trees_.parent(tree, pos);
      if (parent >= 0) add_transfer(broadcast_ ? t.recvs : t.sends, {parent, half});
      for (const int child : trees_.children(tree, pos)) add_transfer(broadcast_ ? t.sends : t.recvs, {child, half});
    }
    return t;
  }

  // Replayed where the closed form's one α and B do not hold (routes of different lengths in a fat-tree).
  bool timed_by_replay() const override { return true; }

  // The transfers of one steady-state slot, of the parity with more of them.
  int pattern_peer(int pos) const override { return sender_in_slot_of_parity(pattern_parity_, pos); }

 private:
  // Whom r sends to in a steady-state slot of `parity`, or −1. Reduce: the rank sends to its parent in the
  // tree where its parity is that one. Broadcast: it sends to its child of that parity. At most one, as the
  // slots guarantee.
  int sender_in_slot_of_parity(int parity, int r) const {
    if (n_ <= 1) return -1;
    if (!broadcast_) return trees_.parent(trees_.parity(0, r) == parity ? 0 : 1, r);
    for (int tree = 0; tree < 2; ++tree)
      for (const int child : trees_.children(tree, r))
        if (trees_.parity(tree, child) == parity) return child;
    return -1;
  }

  const std::vector<std::vector<SlotStep>>& steps() const {
    if (steps_.empty()) {
      steps_ = build_slot_steps(n_, bytes_, k_);
      const int reduce_slots = 2 * k_ + 2 * floor_log2(std::max(n_, 1)) - 2;
      for (auto& s : steps_)
        s.erase(std::remove_if(s.begin(), s.end(),
                               [&](const SlotStep& x) { return (x.slot >= reduce_slots) != broadcast_; }),
                s.end());
    }
    return steps_;
  }

  int n_;
  uint64_t bytes_;
  int k_;
  bool broadcast_;
  Trees trees_;
  int pattern_parity_ = 0;
  mutable std::vector<std::vector<SlotStep>> steps_;  // built on first use
};

}  // namespace

int double_binary_tree_rounds(int ranks, int chunks) {
  if (ranks <= 1) return 0;
  static std::map<std::pair<int, int>, int> cache;  // simulations are single-threaded
  const auto key = std::make_pair(ranks, chunks);
  const auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const int rounds = critical_path_rounds(build_slot_steps(ranks, 0, chunks));
  cache.emplace(key, rounds);
  return rounds;
}

std::shared_ptr<const Schedule> make_double_binary_tree_schedule(int members, uint64_t bytes, int chunks,
                                                                 bool broadcast_half) {
  if (members < 1 || chunks < 1) throw std::invalid_argument("double binary tree: bad members or chunk count");
  return std::make_shared<DoubleBinaryTreeSchedule>(members, bytes, chunks, broadcast_half);
}

// Two phases, each one group of every rank: the reduce half, then the broadcast half.
AlgorithmImplementation double_binary_tree_implementation() {
  AlgorithmImplementation tree;
  tree.algorithm = Algorithm::DoubleBinaryTree;
  tree.plan = [](CollectiveKind, int ranks, const NodeRanks&, uint64_t bytes, const CollectiveOptions& options) {
    Plan plan;
    const int chunks = pipeline_chunks(bytes - bytes / 2, options);
    for (const bool broadcast_half : {false, true})
      plan.phases.push_back(single_group_plan(ranks, make_double_binary_tree_schedule(ranks, bytes, chunks,
                                                                                      broadcast_half))
                                .phases.front());
    return plan;
  };
  tree.misfit = nullptr;
  tree.closed_form = [](CollectiveKind, int ranks, uint64_t bytes, const AlphaBeta& link,
                        const CollectiveOptions& options) {
    const double s = static_cast<double>(bytes);
    const int k = pipeline_chunks(bytes - bytes / 2, options);
    return double_binary_tree_rounds(ranks, k) * (link.alpha + s / (2.0 * k * link.bandwidth));
  };
  return tree;
}

}  // namespace dtsim::sim
