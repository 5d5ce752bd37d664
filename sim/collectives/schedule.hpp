// An algorithm as data: for one message size, the sequence of steps each member of a group performs. A
// step posts at most one send and one receive, and the member waits for both before its next step. With
// every link a rank's own (a star), that rule alone makes a schedule contention-free, so its simulated
// time is exactly the α-β closed form; on other fabrics the same steps meet whatever contention there is.
//
// The executors (executor.hpp) run a Plan, a sequence of phases, at any fidelity; the algorithm files only
// say who sends what to whom.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sim/config/collective_types.hpp"

namespace dtsim::sim {

struct Transfer {
  int peer = -1;  // position in the group; -1 = none
  uint64_t bytes = 0;
  bool active() const { return peer >= 0; }
};

struct Step {
  Transfer send;
  Transfer recv;
};

// Bytes one member exchanges with each peer over a whole schedule (aggregated fidelity).
struct PeerTotals {
  std::vector<Transfer> sends;
  std::vector<Transfer> recvs;
};

// Adds t's bytes to the entry of t's peer in `list`, or appends t (per-peer sums for Schedule::totals).
void add_transfer(std::vector<Transfer>& list, const Transfer& t);

class Schedule {
 public:
  virtual ~Schedule() = default;

  virtual int size() const = 0;  // members of the group
  virtual int num_steps(int pos) const = 0;
  virtual Step step(int pos, int index) const = 0;
  // Lanes run side by side, each its own sequence of steps over the same members (NCCL's channels: each
  // ring carries its share of the message along its own order of the ranks). A member posts the step of
  // every lane at once and waits for all of them. step(pos, index) is lane 0's.
  virtual int lanes() const { return 1; }
  virtual Step lane_step(int pos, int index, int lane) const;
  // Lanes of one group advance together: the group's step ends when all its lanes' transfers are done (a
  // tree's receives from its children feed its send to the parent). Groups are numbered 0, 1, … and run
  // independently of each other. By default every lane is a group of its own. Two members meet at most once in
  // a group's step, in a lane of that group on both sides.
  virtual int lane_group(int lane) const { return lane; }
  // The α-β time of the whole schedule on a contention-free fabric.
  virtual double seconds(const AlphaBeta& link) const = 0;
  // Schedules whose hops inside a node and between nodes differ (NCCL's tree: a chain over NVLink, a tree
  // over the network) are timed with each level's α and B instead.
  virtual bool timed_by_level() const { return false; }
  virtual double seconds_by_level(const AlphaBeta& /*intra*/, const AlphaBeta& inter) const { return seconds(inter); }
  // Bytes all members send together.
  virtual uint64_t total_bytes() const;
  // Per-peer sums of the member's steps (the default walks them).
  virtual PeerTotals totals(int pos) const;
  // The peer of the member's first send, or -1: the flows that run at the same time in the schedule's
  // first step, from which the analytic fidelity reads latency and link sharing.
  virtual int pattern_peer(int pos) const;
  // The peers of the member's first sends in every lane (the default: pattern_peer's, if any).
  virtual std::vector<int> pattern_peers(int pos) const;
  // Transfers the stepwise fidelity simulates (the default walks every member's steps).
  virtual uint64_t stepwise_flows() const;

  // Timing by replay (replay_plan below) instead of seconds(): for schedules whose hops differ in latency
  // or bandwidth (a tree's chain over NVLink and its node hops over the network, halving-doubling's
  // partners inside and across nodes), where no closed form of one or two links is exact.
  virtual bool timed_by_replay() const { return false; }
  // Rings (every step, each member of a lane sends one chunk to the same successor): the bytes of a step's
  // chunk in the lane, or 0 for other schedules. Rings are timed by ring_recurrence_seconds, hop by hop.
  virtual double ring_chunk(int /*lane*/) const { return 0.0; }
};

// One hop of a ring, from a member to its successor: how long the sender is busy with a chunk (route latency
// + chunk / bandwidth) and how long until the successor has it (the same plus the protocol's wait).
struct RingHop {
  double send = 0.0;
  double pass = 0.0;
};
// `steps` steps of a ring whose member i sends to member i+1 (mod n) over hops[i], as the stepwise fidelity
// runs them: a member starts step k+1 once its send of step k is delivered and it has its predecessor's
// chunk of step k (sends do not wait for their receiver). S_i(k+1) = max(S_i(k) + send_i, S_{i−1}(k) +
// pass_{i−1}), S_i(0) = 0; the result is max_i S_i(steps). With every hop alike it is steps · pass; where one
// hop is slow its sender is busy steps · send while the others' waits overlap its transfers. O(q · steps)
// where the hops repeat every q members (q = n at worst).
double ring_recurrence_seconds(const std::vector<RingHop>& hops, int steps);

// Whether a schedule's sends move without waiting for their receiver (NCCL's buffers; see replay_plan):
// rings, where that can change their timing, that is with a protocol's receive waits (`protocol_waits`) or
// with several lanes (channels that drift apart). A single ring without waits takes the same time either
// way (ring_recurrence_seconds with pass = send; checked against stepwise on fat-trees, HGX nodes and two
// sites), and meeting step by step spares SimGrid's permanent receivers, which cost about 40 % more wall
// time per transfer. Other schedules meet step by step, which their closed forms count on.
inline bool buffered(const Schedule& s, bool protocol_waits) {
  return s.ring_chunk(0) > 0.0 && (protocol_waits || s.lanes() > 1);
}



// Members (global ranks, position order) and what they run.
struct Group {
  std::vector<int> members;
  std::shared_ptr<const Schedule> schedule;
};

// Groups that run at the same time on disjoint ranks; a phase starts on a rank when it finished the
// previous one (the stepwise fidelity has no barrier between phases).
struct Phase {
  std::vector<Group> groups;
};

struct Plan {
  std::vector<Phase> phases;
  uint64_t total_bytes() const;
  uint64_t stepwise_flows() const;
  bool timed_by_replay() const;  // some schedule of it is
};

// Where a replay's transfers run: the replay hands it the transfers that start (all that start at `now` in
// one batch, each with an id) and asks it when the next of the running ones completes.
struct ReplayTransfer {
  int from = -1, to = -1;  // global ranks
  uint64_t bytes = 0;
  int lane_group = 0;
};
class ReplayNetwork {
 public:
  virtual ~ReplayNetwork() = default;
  virtual void start(const std::vector<ReplayTransfer>& batch, const std::vector<size_t>& ids, double now) = 0;
  // When the network's next event is (a transfer completing, or a change in how running ones share links);
  // infinity when nothing runs.
  virtual double next_end() const = 0;
  // Moves to next_end() and returns the ids of the transfers delivered then (possibly none).
  virtual std::vector<size_t> advance() = 0;
  // How long after its delivery a transfer's receiver has the data (a protocol's hop wait beyond the route).
  virtual double receive_wait(size_t /*id*/) const { return 0.0; }
};

// The plan as the stepwise fidelity runs it: every rank starts at 0 and goes through its phases one after
// the other with no barrier between them, posting each step of a schedule in order (its lane groups
// independently, a step's transfers at once); a step ends when all its transfers have. A send from a to b
// goes to b's next receive from a in the same lane group, as the mailboxes match them, and `network` says
// when it is delivered. In a buffered schedule (buffered(schedule, protocol_waits)) it starts when the sender posts it (the receiver's buffers
// take it whether or not the receiver is there yet), the sender's part ends at the delivery and the
// receiver's network.receive_wait later (or when it posts the receive, if later). In others it starts once
// both ends have posted it and both parts end network.receive_wait after the delivery. An event-ordered walk of that data
// flow, O(transfers · log). Returns when each phase ended: the last rank to finish its part of it (at
// least the previous phase's end).
std::vector<double> replay_plan(const Plan& plan, int ranks, ReplayNetwork& network, bool protocol_waits);

}  // namespace dtsim::sim
