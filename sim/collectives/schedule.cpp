#include "sim/collectives/schedule.hpp"

#include <algorithm>

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
