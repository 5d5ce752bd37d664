#include "sim/collectives/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <tuple>
#include <unordered_map>

namespace dtsim::sim {
void add_transfer(std::vector<Transfer>& list, const Transfer& t) {
  for (Transfer& e : list)
    if (e.peer == t.peer) {
      e.bytes += t.bytes;
      return;
    }
  list.push_back(t);
}

Step Schedule::lane_step(int pos, int index, int lane) const {
  (void)lane;
  return step(pos, index);
}

uint64_t Schedule::total_bytes() const {
  uint64_t total = 0;
  for (int pos = 0; pos < size(); ++pos)
    for (int i = 0; i < num_steps(pos); ++i)
      for (int lane = 0; lane < lanes(); ++lane) {
        const Step s = lane_step(pos, i, lane);
        if (s.send.active()) total += s.send.bytes;
      }
  return total;
}

PeerTotals Schedule::totals(int pos) const {
  PeerTotals t;
  for (int i = 0; i < num_steps(pos); ++i)
    for (int lane = 0; lane < lanes(); ++lane) {
      const Step s = lane_step(pos, i, lane);
      if (s.send.active()) add_transfer(t.sends, s.send);
      if (s.recv.active()) add_transfer(t.recvs, s.recv);
    }
  return t;
}

int Schedule::pattern_peer(int pos) const {
  for (int i = 0; i < num_steps(pos); ++i) {
    const Step s = step(pos, i);
    if (s.send.active()) return s.send.peer;
  }
  return -1;
}

std::vector<int> Schedule::pattern_peers(int pos) const {
  const int peer = pattern_peer(pos);
  return peer >= 0 ? std::vector<int>{peer} : std::vector<int>{};
}

uint64_t Schedule::stepwise_flows() const {
  uint64_t flows = 0;
  for (int pos = 0; pos < size(); ++pos)
    for (int i = 0; i < num_steps(pos); ++i)
      for (int lane = 0; lane < lanes(); ++lane)
        if (lane_step(pos, i, lane).send.active()) ++flows;
  return flows;
}

uint64_t Plan::total_bytes() const {
  uint64_t total = 0;
  for (const Phase& phase : phases)
    for (const Group& g : phase.groups) total += g.schedule->total_bytes();
  return total;
}

}  // namespace dtsim::sim

namespace dtsim::sim {

bool Plan::timed_by_replay() const {
  for (const Phase& phase : phases)
    for (const Group& g : phase.groups)
      if (g.schedule->timed_by_replay()) return true;
  return false;
}

uint64_t Plan::stepwise_flows() const {
  uint64_t flows = 0;
  for (const Phase& phase : phases)
    for (const Group& g : phase.groups) flows += g.schedule->stepwise_flows();
  return flows;
}

namespace {

// One side of a transfer waiting for the other: who posted it, when, and (for a send) what it carries.
struct Posted {
  int rank = -1;
  double at = 0.0;
  uint64_t bytes = 0;
};

struct PairQueue {
  std::deque<Posted> sends, recvs;
};

// Where a rank sits in a phase.
struct Seat {
  int phase = -1;
  const Group* group = nullptr;
  int pos = -1;
};

}  // namespace

std::vector<double> replay_plan(const Plan& plan, int ranks, ReplayNetwork& network) {
  // Each rank's seats, in phase order, and each schedule's lane groups.
  std::vector<std::vector<Seat>> seats(static_cast<size_t>(ranks));
  std::unordered_map<const Schedule*, std::vector<std::vector<int>>> lane_groups;
  for (size_t ph = 0; ph < plan.phases.size(); ++ph)
    for (const Group& g : plan.phases[ph].groups) {
      for (size_t pos = 0; pos < g.members.size(); ++pos)
        seats[static_cast<size_t>(g.members[pos])].push_back({static_cast<int>(ph), &g, static_cast<int>(pos)});
      auto& groups = lane_groups[g.schedule.get()];
      if (!groups.empty()) continue;
      for (int lane = 0; lane < g.schedule->lanes(); ++lane) {
        const size_t lg = static_cast<size_t>(g.schedule->lane_group(lane));
        if (groups.size() <= lg) groups.resize(lg + 1);
        groups[lg].push_back(lane);
      }
    }
  struct Progress {
    size_t seat = 0;
    int groups_left = 0;           // lane groups of the current seat not yet through their steps
    std::vector<int> step, pending;  // per lane group of the current seat
  };
  std::vector<Progress> progress(static_cast<size_t>(ranks));
  std::vector<double> phase_end(plan.phases.size(), 0.0);
  std::unordered_map<uint64_t, PairQueue> pairs;  // (lane group, from, to) → posts not yet matched
  std::vector<ReplayTransfer> flights;
  // Matched transfers by start time, then in order of creation (for determinism).
  using Start = std::pair<double, size_t>;
  std::priority_queue<Start, std::vector<Start>, std::greater<Start>> starts;

  const auto key = [](int lane_group, int from, int to) {
    return (static_cast<uint64_t>(lane_group) << 48) | (static_cast<uint64_t>(from) << 24) | static_cast<uint64_t>(to);
  };
  const auto match = [&](PairQueue& q, int from, int to, int lane_group) {
    while (!q.sends.empty() && !q.recvs.empty()) {
      const Posted s = q.sends.front(), r = q.recvs.front();
      q.sends.pop_front();
      q.recvs.pop_front();
      flights.push_back({from, to, s.bytes, lane_group});
      starts.push({std::max(s.at, r.at), flights.size() - 1});
    }
  };
  std::function<void(int, double)> enter_seat;
  // Posts rank r's next step in lane group lg of its current seat at `now` (empty steps are over at once);
  // when the group has no step left and it was the seat's last, the rank moves on to its next seat.
  const auto post = [&](int r, int lg, double now) {
    Progress& p = progress[static_cast<size_t>(r)];
    const Seat& seat = seats[static_cast<size_t>(r)][p.seat];
    const Schedule& schedule = *seat.group->schedule;
    const std::vector<int>& lanes = lane_groups[&schedule][static_cast<size_t>(lg)];
    int& step = p.step[static_cast<size_t>(lg)];
    int& pending = p.pending[static_cast<size_t>(lg)];
    for (; step < schedule.num_steps(seat.pos); ++step) {
      std::vector<Step> steps;
      for (const int lane : lanes) {
        steps.push_back(schedule.lane_step(seat.pos, step, lane));
        pending += (steps.back().send.active() ? 1 : 0) + (steps.back().recv.active() ? 1 : 0);
      }
      if (pending == 0) continue;
      for (const Step& s : steps) {
        if (s.send.active()) {
          const int to = seat.group->members[static_cast<size_t>(s.send.peer)];
          PairQueue& q = pairs[key(lg, r, to)];
          q.sends.push_back({r, now, s.send.bytes});
          match(q, r, to, lg);
        }
        if (s.recv.active()) {
          const int from = seat.group->members[static_cast<size_t>(s.recv.peer)];
          PairQueue& q = pairs[key(lg, from, r)];
          q.recvs.push_back({r, now, 0});
          match(q, from, r, lg);
        }
      }
      return;
    }
    phase_end[static_cast<size_t>(seat.phase)] = std::max(phase_end[static_cast<size_t>(seat.phase)], now);
    if (--p.groups_left == 0) {
      ++p.seat;
      enter_seat(r, now);
    }
  };
  enter_seat = [&](int r, double now) {
    Progress& p = progress[static_cast<size_t>(r)];
    if (p.seat >= seats[static_cast<size_t>(r)].size()) return;
    const size_t groups = lane_groups[seats[static_cast<size_t>(r)][p.seat].group->schedule.get()].size();
    p.groups_left = static_cast<int>(groups);
    p.step.assign(groups, 0);
    p.pending.assign(groups, 0);
    for (size_t lg = 0; lg < groups; ++lg) post(r, static_cast<int>(lg), now);
  };
  const auto complete = [&](int r, int lg, double now) {
    Progress& p = progress[static_cast<size_t>(r)];
    if (--p.pending[static_cast<size_t>(lg)] > 0) return;
    ++p.step[static_cast<size_t>(lg)];
    post(r, lg, now);
  };

  for (int r = 0; r < ranks; ++r) enter_seat(r, 0.0);
  std::vector<size_t> ids;
  std::vector<ReplayTransfer> transfers;
  while (true) {
    const double next_end = network.next_end();
    const double next_start = starts.empty() ? std::numeric_limits<double>::infinity() : starts.top().first;
    if (std::isinf(next_end) && std::isinf(next_start)) break;
    if (next_end <= next_start) {  // ends first: a link a transfer leaves is free for those starting then
      const double now = next_end;
      for (const size_t id : network.advance()) {
        const ReplayTransfer& t = flights[id];
        complete(t.from, t.lane_group, now);
        complete(t.to, t.lane_group, now);
      }
      continue;
    }
    // Every transfer that starts now (within a picosecond: sums of the same terms in another order), together.
    ids.clear();
    transfers.clear();
    while (!starts.empty() && starts.top().first <= next_start + 1e-12) {
      ids.push_back(starts.top().second);
      transfers.push_back(flights[ids.back()]);
      starts.pop();
    }
    network.start(transfers, ids, next_start);
  }
  // A phase no rank had steps in ends with the one before it.
  for (size_t ph = 1; ph < phase_end.size(); ++ph) phase_end[ph] = std::max(phase_end[ph], phase_end[ph - 1]);
  return phase_end;
}

}  // namespace dtsim::sim
