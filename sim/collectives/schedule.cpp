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

// The smallest q dividing hops.size() with hops[i] == hops[i mod q] for every i (an HGX node's rail ring
// repeats every node, a fat-tree's every leaf switch).
size_t hop_period(const std::vector<RingHop>& hops) {
  const size_t n = hops.size();
  for (size_t q = 1; q < n; ++q) {
    if (n % q != 0) continue;
    bool repeats = true;
    for (size_t i = q; i < n && repeats; ++i)
      repeats = hops[i].send == hops[i % q].send && hops[i].pass == hops[i % q].pass;
    if (repeats) return q;
  }
  return n;
}

}  // namespace

double ring_recurrence_seconds(const std::vector<RingHop>& hops, int steps) {
  if (hops.empty() || steps <= 0) return 0.0;
  // The start times begin equal (all 0) and each step maps a q-periodic vector to a q-periodic one when the
  // hops repeat every q members, so the recurrence over one period is exact.
  const size_t n = hop_period(hops);
  if (n == 1) return steps * std::max(hops[0].send, hops[0].pass);
  std::vector<double> start(n, 0.0), next(n, 0.0);
  for (int k = 0; k < steps; ++k) {
    for (size_t i = 0; i < n; ++i) {
      const size_t before = (i + n - 1) % n;
      next[i] = std::max(start[i] + hops[i].send, start[before] + hops[before].pass);
    }
    start.swap(next);
  }
  return *std::max_element(start.begin(), start.end());
}

namespace {

// A send no receive has taken yet: a buffered one is already a flight; another waits with what it carries.
struct Posted {
  size_t flight = 0;
  bool buffered = false;
  double at = 0.0;
  uint64_t bytes = 0;
};

// A pair's sends and receives not yet matched (the receives by when they were posted).
struct PairQueue {
  std::deque<Posted> sends;
  std::deque<double> recvs;
};

// Where a rank sits in a phase.
struct Seat {
  int phase = -1;
  const Group* group = nullptr;
  int pos = -1;
};

}  // namespace

std::vector<double> replay_plan(const Plan& plan, int ranks, ReplayNetwork& network, bool protocol_waits) {
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
  // Per flight: whether the sender was free to send it unmatched, whether a receive has taken it, and when
  // its receiver has the data (−1 until delivered).
  std::vector<char> buffered_flight, taken;
  std::vector<double> ready_at;
  // Transfers posted and not yet moving, by time, then in order of creation (for determinism).
  using Event = std::pair<double, size_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> starts;
  // A flight's end for one side (0 the sender, 1 the receiver): (when, flight, side).
  using Ending = std::tuple<double, size_t, int>;
  std::priority_queue<Ending, std::vector<Ending>, std::greater<Ending>> endings;

  const auto key = [](int lane_group, int from, int to) {
    return (static_cast<uint64_t>(lane_group) << 48) | (static_cast<uint64_t>(from) << 24) | static_cast<uint64_t>(to);
  };
  const auto new_flight = [&](int from, int to, uint64_t bytes, int lane_group, bool buffered, double start) {
    flights.push_back({from, to, bytes, lane_group});
    buffered_flight.push_back(buffered ? 1 : 0);
    taken.push_back(buffered ? 0 : 1);
    ready_at.push_back(-1.0);
    starts.push({start, flights.size() - 1});
    return flights.size() - 1;
  };
  // A pair's oldest sends go to its oldest receives. A buffered flight already delivered ends its receive
  // at max(now, when its data is there); an unbuffered send starts moving now that both ends have posted it.
  const auto match = [&](PairQueue& q, int from, int to, int lane_group, double now) {
    while (!q.sends.empty() && !q.recvs.empty()) {
      const Posted s = q.sends.front();
      const double r = q.recvs.front();
      q.sends.pop_front();
      q.recvs.pop_front();
      if (!s.buffered) {
        new_flight(from, to, s.bytes, lane_group, false, std::max(s.at, r));
        continue;
      }
      taken[s.flight] = 1;
      if (ready_at[s.flight] >= 0.0) endings.push({std::max(now, ready_at[s.flight]), s.flight, 1});
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
    const bool eager = buffered(schedule, protocol_waits);
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
          if (eager)  // moves at once, whether or not the receiver is there yet
            q.sends.push_back({new_flight(r, to, s.send.bytes, lg, true, now), true, now, s.send.bytes});
          else
            q.sends.push_back({0, false, now, s.send.bytes});
          match(q, r, to, lg, now);
        }
        if (s.recv.active()) {
          const int from = seat.group->members[static_cast<size_t>(s.recv.peer)];
          PairQueue& q = pairs[key(lg, from, r)];
          q.recvs.push_back(now);
          match(q, from, r, lg, now);
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
    const double next_ending = endings.empty() ? std::numeric_limits<double>::infinity() : std::get<0>(endings.top());
    if (std::isinf(next_end) && std::isinf(next_start) && std::isinf(next_ending)) break;
    if (next_end <= next_start && next_end <= next_ending) {
      // Deliveries first: a link a transfer leaves is free for those starting then.
      const double now = next_end;
      for (const size_t id : network.advance()) {
        ready_at[id] = now + network.receive_wait(id);
        if (buffered_flight[id]) {  // the sender is done with it; the receiver has it after the wait
          complete(flights[id].from, flights[id].lane_group, now);
        } else {
          endings.push({ready_at[id], id, 0});
        }
        if (taken[id]) endings.push({ready_at[id], id, 1});
      }
      continue;
    }
    if (next_ending <= next_start + 1e-12) {  // endings before starts, so that what they post starts together
      const auto [now, id, side] = endings.top();
      endings.pop();
      complete(side == 0 ? flights[id].from : flights[id].to, flights[id].lane_group, now);
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
