// The schedules as data, without simulating: every send has its matching receive (same pair, same size, same
// order), every step posts at most one of each, the shortcuts (per-peer totals, byte and flow counts) agree
// with the steps, and the small helpers do what they say.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <queue>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/plans.hpp"
#include "sim/config/collective_algorithms.hpp"

namespace dtsim::sim {
namespace {

void check_schedule(const Schedule& s, const std::string& what) {
  std::map<std::pair<int, int>, std::vector<uint64_t>> sent, received;
  uint64_t bytes = 0, flows = 0;
  for (int pos = 0; pos < s.size(); ++pos) {
    std::map<int, uint64_t> out, in;
    for (int i = 0; i < s.num_steps(pos); ++i) {
      const Step step = s.step(pos, i);
      EXPECT_TRUE(step.send.active() || step.recv.active()) << what << ": empty step";
      if (step.send.active()) {
        ASSERT_NE(step.send.peer, pos) << what;
        sent[{pos, step.send.peer}].push_back(step.send.bytes);
        out[step.send.peer] += step.send.bytes;
        bytes += step.send.bytes;
        ++flows;
      }
      if (step.recv.active()) {
        received[{step.recv.peer, pos}].push_back(step.recv.bytes);
        in[step.recv.peer] += step.recv.bytes;
      }
    }
    const PeerTotals t = s.totals(pos);
    std::map<int, uint64_t> t_out, t_in;
    for (const Transfer& x : t.sends) t_out[x.peer] += x.bytes;
    for (const Transfer& x : t.recvs) t_in[x.peer] += x.bytes;
    EXPECT_EQ(t_out, out) << what << ": totals of position " << pos;
    EXPECT_EQ(t_in, in) << what << ": totals of position " << pos;
  }
  EXPECT_EQ(sent, received) << what << ": sends and receives do not pair up";
  EXPECT_EQ(s.total_bytes(), bytes) << what;
  EXPECT_EQ(s.stepwise_flows(), flows) << what;
}

TEST(Schedules, SendsAndReceivesPairUpAndShortcutsAgree) {
  CollectiveOptions options;
  options.pipeline_chunk_bytes = 1000;
  for (int n = 1; n <= 40; ++n)
    for (const uint64_t bytes : {0ull, 1ull, 7ull, 4096ull, 1000003ull}) {
      const std::string at = " N=" + std::to_string(n) + " S=" + std::to_string(bytes);
      for (const CollectiveKind kind : {CollectiveKind::Allreduce, CollectiveKind::ReduceScatter,
                                        CollectiveKind::AllGather, CollectiveKind::Broadcast, CollectiveKind::Reduce})
        for (const Algorithm a : {Algorithm::Ring, Algorithm::DoubleBinaryTree, Algorithm::HalvingDoubling}) {
          if (!algorithm_descriptor(a).implements(kind)) continue;
          options.root = n / 2;
          const Plan plan = flat_plan(kind, a, n, bytes, options);
          for (const Phase& phase : plan.phases)
            for (const Group& g : phase.groups)
              check_schedule(*g.schedule, std::string(to_string(a)) + " " + to_string(kind) + at);
        }
    }
}

TEST(Schedules, HierarchicalPlanHasThreeKindsOfPhaseOverTheRightGroups) {
  const std::vector<std::vector<int>> nodes = {{0, 1, 2}, {3, 4, 5}};
  CollectiveOptions options;
  const Plan plan = hierarchical_plan(nodes, 3000, options);
  ASSERT_EQ(plan.phases.size(), 3u);
  EXPECT_EQ(plan.phases[0].groups[1].members, (std::vector<int>{3, 4, 5}));  // reduce-scatter in each node
  EXPECT_EQ(plan.phases[1].groups.size(), 3u);                             // one allreduce per local index
  EXPECT_EQ(plan.phases[1].groups[2].members, (std::vector<int>{2, 5}));
  // Local rank j carries chunk (j+1) mod g: 1000 bytes each.
  EXPECT_EQ(plan.phases[1].groups[0].schedule->total_bytes(), 2000u);
  EXPECT_EQ(plan.total_bytes(), 2u * 2 * 6000 + 3 * 2000);  // (g−1)·S per node and intra phase
  for (const Phase& phase : plan.phases)
    for (const Group& g : phase.groups) check_schedule(*g.schedule, "hierarchical");
  EXPECT_THROW(hierarchical_plan({{0, 1}, {2}}, 3000, options), std::invalid_argument);
}

TEST(Schedules, ChunksCoverTheMessageExactly) {
  for (const uint64_t bytes : {0ull, 1ull, 7ull, 1000ull, 1000003ull})
    for (const int n : {1, 2, 3, 8, 64}) {
      uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
      for (int c = 0; c < n; ++c) {
        sum += chunk_bytes(bytes, n, c);
        lo = std::min(lo, chunk_bytes(bytes, n, c));
        hi = std::max(hi, chunk_bytes(bytes, n, c));
      }
      EXPECT_EQ(sum, bytes);
      EXPECT_LE(hi - lo, 1u);
    }
}

TEST(Schedules, PipelineChunksFollowTheChunkSizeWithinBounds) {
  CollectiveOptions o;  // 512 KiB chunks, at most 128
  EXPECT_EQ(pipeline_chunks(0, o), 1);
  EXPECT_EQ(pipeline_chunks(1, o), 1);
  EXPECT_EQ(pipeline_chunks(512 << 10, o), 1);
  EXPECT_EQ(pipeline_chunks((512 << 10) + 1, o), 2);
  EXPECT_EQ(pipeline_chunks(15ull << 20, o), 30);
  EXPECT_EQ(pipeline_chunks(1ull << 30, o), 128);
}

TEST(Names, RoundTripAndBusBandwidthFactors) {
  for (const std::string& name : algorithm_names()) {
    Algorithm a;
    ASSERT_TRUE(parse_algorithm(name, a));
    EXPECT_EQ(name, to_string(a));
  }
  for (const std::string& name : collective_kind_names()) {
    CollectiveKind k;
    ASSERT_TRUE(parse_collective_kind(name, k));
    EXPECT_EQ(name, to_string(k));
  }
  Fidelity f;
  EXPECT_FALSE(parse_fidelity("exact", f));
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::Allreduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::ReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::AllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::Broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::Reduce, 8), 1.0);
}

// A replay network without sharing: every transfer costs α + bytes/B of its level (inside a node or between
// nodes, ranks `per_node` to a node), whatever else runs.
// With inter_wait, the receiver of a transfer between nodes has it that long after its delivery (a protocol's
// hop latency beyond the route's).
class LevelNetwork final : public ReplayNetwork {
 public:
  LevelNetwork(int per_node, AlphaBeta intra, AlphaBeta inter, double inter_wait = 0.0)
      : per_node_(per_node), intra_(intra), inter_(inter), inter_wait_(inter_wait) {}
  void start(const std::vector<ReplayTransfer>& batch, const std::vector<size_t>& ids, double now) override {
    for (size_t i = 0; i < batch.size(); ++i) {
      const ReplayTransfer& t = batch[i];
      const bool inside = t.from / per_node_ == t.to / per_node_;
      const AlphaBeta& l = inside ? intra_ : inter_;
      ends_.push({now + l.alpha + static_cast<double>(t.bytes) / l.bandwidth, ids[i]});
      if (waits_.size() <= ids[i]) waits_.resize(ids[i] + 1, 0.0);
      waits_[ids[i]] = inside ? 0.0 : inter_wait_;
    }
  }
  double receive_wait(size_t id) const override { return waits_.at(id); }
  double next_end() const override {
    return ends_.empty() ? std::numeric_limits<double>::infinity() : ends_.top().first;
  }
  std::vector<size_t> advance() override {
    const double now = ends_.top().first;
    std::vector<size_t> done;
    while (!ends_.empty() && ends_.top().first == now) {
      done.push_back(ends_.top().second);
      ends_.pop();
    }
    return done;
  }

 private:
  int per_node_;
  AlphaBeta intra_, inter_;
  double inter_wait_;
  std::vector<double> waits_;
  using End = std::pair<double, size_t>;
  std::priority_queue<End, std::vector<End>, std::greater<End>> ends_;
};

double replayed(const Plan& plan, int ranks, ReplayNetwork& network, bool protocol_waits = false) {
  return replay_plan(plan, ranks, network, protocol_waits).back();
}

TEST(Replay, UniformLinksGiveTheClosedForms) {
  const AlphaBeta link{2e-6, 20e9};
  LevelNetwork uniform(1, link, link);
  CollectiveOptions options;
  options.pipeline_chunk_bytes = 64 * 1024;
  // Sizes that every chunking divides (n ring chunks, k = S / 64 KiB chain chunks, k tree chunks per half,
  // halving to S/8), so that the closed forms' S/N and S/k are the steps' exact sizes.
  for (const int n : {2, 3, 8, 13})
    for (const uint64_t bytes : {uint64_t(n) * 2 * 65536, uint64_t(n) * 6 * 65536}) {
      const std::string at = "N=" + std::to_string(n) + " S=" + std::to_string(bytes);
      for (const auto& [kind, algorithm] :
           std::vector<std::pair<CollectiveKind, Algorithm>>{{CollectiveKind::Allreduce, Algorithm::Ring},
                                                             {CollectiveKind::Allreduce, Algorithm::HalvingDoubling},
                                                             {CollectiveKind::Allreduce, Algorithm::DoubleBinaryTree},
                                                             {CollectiveKind::Broadcast, Algorithm::Ring},
                                                             {CollectiveKind::AllGather, Algorithm::Ring}}) {
        const double expected = closed_form_seconds(kind, algorithm, n, bytes, link, options);
        EXPECT_NEAR(replayed(flat_plan(kind, algorithm, n, bytes, options), n, uniform), expected, 1e-12 * expected)
            << to_string(algorithm) << " " << to_string(kind) << " " << at;
      }
    }
}

// NCCL's tree on 2 nodes of 4 GPUs, k = 4 chunks per half: each half is the longest path (3 chain hops, 1
// node hop) plus k − 1 slowest hops; the reduce and the broadcast follow each other.
TEST(Replay, NcclTreeIsTheLongestPathPlusOneSlowestHopPerChunk) {
  const AlphaBeta intra{1e-6, 100e9}, inter{5e-6, 10e9};
  LevelNetwork levels(4, intra, inter);
  const uint64_t bytes = 8 << 20;
  Plan plan;
  for (const bool broadcast : {false, true})
    plan.phases.push_back({{Group{{0, 1, 2, 3, 4, 5, 6, 7},
                                  make_nccl_tree_schedule({{0, 1, 2, 3}, {4, 5, 6, 7}}, bytes, 4, broadcast)}}});
  const double chunk = bytes / 2.0 / 4;
  const double ci = intra.alpha + chunk / intra.bandwidth, ce = inter.alpha + chunk / inter.bandwidth;
  const std::vector<double> ends = replay_plan(plan, 8, levels, false);
  EXPECT_NEAR(ends[0], 3 * ci + ce + 3 * ce, 1e-15);
  EXPECT_NEAR(ends[1], 2 * (3 * ci + ce + 3 * ce), 1e-15);
}

// Halving-doubling over 2 nodes of 4: the partners at distance 4 are in the other node, those at 2 and 1 in
// the same one; each step costs its own level's α + bytes/B (the closed form of one link cannot say this).
TEST(Replay, HalvingDoublingChargesEachDistanceAtItsLevel) {
  const AlphaBeta intra{1e-6, 100e9}, inter{5e-6, 10e9};
  LevelNetwork levels(4, intra, inter);
  const uint64_t bytes = 8 << 20;
  const Plan plan = flat_plan(CollectiveKind::Allreduce, Algorithm::HalvingDoubling, 8, bytes, {});
  const double s = static_cast<double>(bytes);
  // Halving sends S/2, S/4, S/8 at distances 4, 2, 1; doubling retraces them.
  const double expected = 2 * ((inter.alpha + s / 2 / inter.bandwidth) + (intra.alpha + s / 4 / intra.bandwidth) +
                               (intra.alpha + s / 8 / intra.bandwidth));
  EXPECT_NEAR(replayed(plan, 8, levels), expected, 1e-15);
}

// The ring recurrence by hand: two members, member 1's hop slow (send 3, pass 4 = send + a protocol wait of
// 1). Its sender is busy every step, and its successor has the last chunk one wait later: 3 · 3 + 1.
TEST(RingRecurrence, ASlowHopKeepsItsSenderBusyAndPaysItsWaitOnce) {
  EXPECT_DOUBLE_EQ(ring_recurrence_seconds({{1, 1}, {3, 4}}, 3), 10.0);
  // Every hop alike: each step is one pass.
  EXPECT_DOUBLE_EQ(ring_recurrence_seconds({{2, 5}, {2, 5}, {2, 5}}, 4), 20.0);
  // Waits long against the sends: the chunks' round trip sets the pace, the mean pass (5 + 2) / 2 a step.
  EXPECT_DOUBLE_EQ(ring_recurrence_seconds({{1, 5}, {2, 2}}, 4), 14.0);
  EXPECT_DOUBLE_EQ(ring_recurrence_seconds({}, 4), 0.0);
  EXPECT_DOUBLE_EQ(ring_recurrence_seconds({{1, 1}}, 0), 0.0);
}

// A ring whose hops repeat (nodes of 4 members, every node's last hop slow, one odd node) against the
// recurrence written out over all n members: repeating hops are timed over one period, and must not change
// the answer; a ring with one odd period must not be mistaken for a periodic one.
TEST(RingRecurrence, RepeatingHopsGiveTheFullRecurrence) {
  const auto full = [](const std::vector<RingHop>& hops, int steps) {
    const size_t n = hops.size();
    std::vector<double> start(n, 0.0), next(n, 0.0);
    for (int k = 0; k < steps; ++k) {
      for (size_t i = 0; i < n; ++i)
        next[i] = std::max(start[i] + hops[i].send, start[(i + n - 1) % n] + hops[(i + n - 1) % n].pass);
      start.swap(next);
    }
    return *std::max_element(start.begin(), start.end());
  };
  std::vector<RingHop> hops;
  for (int node = 0; node < 6; ++node)
    for (int m = 0; m < 4; ++m) hops.push_back(m == 3 ? RingHop{3.0, 4.5} : RingHop{1.0, 1.25 + 0.5 * m});
  for (const int steps : {1, 5, 2 * 23, 200}) {
    EXPECT_DOUBLE_EQ(ring_recurrence_seconds(hops, steps), full(hops, steps)) << steps;
    std::vector<RingHop> odd = hops;
    odd[13].pass = 9.0;  // one hop of node 3 slower
    EXPECT_DOUBLE_EQ(ring_recurrence_seconds(odd, steps), full(odd, steps)) << steps;
    EXPECT_GT(ring_recurrence_seconds(odd, steps), ring_recurrence_seconds(hops, steps)) << steps;
  }
}

// A ring over 2 nodes of 4 whose network hops carry a protocol wait: sends do not wait for their receivers,
// so the network hops' senders are busy K · (α + C/B) and only the last chunk's wait shows, where a ring
// whose steps met would pay K · (α + C/B + wait). The replay, the recurrence and the closed form agree.
TEST(Replay, RingSendsDoNotWaitForTheProtocolsHopLatency) {
  const AlphaBeta intra{0.5e-6, 100e9}, inter{1e-6, 10e9};
  const double wait = 10e-6;
  LevelNetwork levels(4, intra, inter, wait);
  const uint64_t bytes = 8 << 20;
  const Plan plan = flat_plan(CollectiveKind::Allreduce, Algorithm::Ring, 8, bytes, {});
  const double chunk = bytes / 8.0;
  const int steps = 2 * (8 - 1);
  const double send_inter = inter.alpha + chunk / inter.bandwidth;
  const double expected = steps * send_inter + wait;
  EXPECT_NEAR(replayed(plan, 8, levels, true), expected, 1e-15);
  std::vector<RingHop> hops;
  for (int i = 0; i < 8; ++i) {
    const bool network = i % 4 == 3;  // members 3 and 7 send to the other node
    const AlphaBeta& l = network ? inter : intra;
    hops.push_back({l.alpha + chunk / l.bandwidth, l.alpha + chunk / l.bandwidth + (network ? wait : 0.0)});
  }
  EXPECT_NEAR(ring_recurrence_seconds(hops, steps), expected, 1e-15);
  EXPECT_LT(expected, steps * (send_inter + wait) - (steps - 2) * wait);
}

}  // namespace
}  // namespace dtsim::sim
