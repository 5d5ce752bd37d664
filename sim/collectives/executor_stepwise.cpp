// The stepwise fidelity: every step of a plan a real transfer between the rank actors (executor.hpp).
#include <algorithm>
#include <list>

#include "sim/collectives/executor.hpp"
#include "sim/collectives/protocol.hpp"
#include "sim/world/link_traffic.hpp"

namespace dtsim::sim {
namespace sg4 = simgrid::s4u;

namespace {

// SimGrid refuses null payloads; the collectives carry no data, so every transfer points at this token.
int step_token = 0;

}  // namespace

std::vector<sg4::Mailbox*> PlannedCollective::incoming_mailboxes(int rank, const Prepared& p) {
  std::vector<sg4::Mailbox*> boxes;
  for (size_t ph = 0; ph < p.plan.phases.size(); ++ph) {
    const Seat seat = seats_[ph][rank];
    if (seat.group < 0) continue;
    const Group& group = p.plan.phases[ph].groups[seat.group];
    const Schedule& schedule = *group.schedule;
    if (!buffered(schedule, p.protocol != Protocol::None) || schedule.num_steps(seat.pos) == 0) continue;
    // Buffered schedules are rings: in each lane the rank receives from one predecessor, every step.
    for (int lane = 0; lane < schedule.lanes(); ++lane) {
      const Step first = schedule.lane_step(seat.pos, 0, lane);
      const int lane_group = schedule.lanes() > 1 ? schedule.lane_group(lane) : 0;
      if (first.recv.active()) boxes.push_back(mailbox(rank, group.members[first.recv.peer], lane_group));
    }
  }
  std::sort(boxes.begin(), boxes.end());
  boxes.erase(std::unique(boxes.begin(), boxes.end()), boxes.end());
  return boxes;
}

void PlannedCollective::run_stepwise(int rank, const Prepared& p) {
  // Rings run on NCCL's receive buffers: a send moves as soon as it is posted, whether or not its receiver
  // has reached that step (the rank is the permanent receiver of its ring mailboxes for the call), so a
  // sender pays its link's latency and bandwidth per step but not the protocol's hop wait, which only the
  // receiver waits. Other schedules meet step by step (their closed forms count rounds of a rendezvous).
  const std::vector<sg4::Mailbox*> incoming = incoming_mailboxes(rank, p);
  for (sg4::Mailbox* mb : incoming) mb->set_receiver(sg4::Actor::self());
  run_steps(rank, p);
  for (sg4::Mailbox* mb : incoming) mb->set_receiver(nullptr);
}

void PlannedCollective::run_steps(int rank, const Prepared& p) {
  const bool modelled = p.protocol != Protocol::None;
  if (p.costs.call_latency > 0.0) sg4::this_actor::sleep_for(p.costs.call_latency);
  for (size_t ph = 0; ph < p.plan.phases.size(); ++ph) {
    const Seat seat = seats_[ph][rank];
    if (seat.group < 0) continue;
    const Group& group = p.plan.phases[ph].groups[seat.group];
    const Schedule& schedule = *group.schedule;
    const int steps = schedule.num_steps(seat.pos);
    if (schedule.lanes() > 1) {
      run_lanes(rank, group, seat.pos, p);
      continue;
    }
    const bool eager = buffered(schedule, modelled);
    for (int i = 0; i < steps; ++i) {
      const Step s = schedule.step(seat.pos, i);
      sg4::CommPtr send;
      uint64_t send_wire = 0;
      std::list<sg4::CommPtr>::iterator tracked;
      // With a protocol, the receiver has the data the protocol's hop wait after SimGrid delivers it:
      // max(route, hop latency) + wire bytes / bandwidth in all; the sender too, unless the schedule is
      // buffered (then it is free once it is delivered).
      double done = 0.0;
      if (s.send.active()) {
        const int to = group.members[s.send.peer];
        send_wire = modelled ? wire_bytes(s.send.bytes, p.costs.bandwidth_fraction) : s.send.bytes;
        send = mailbox(to, rank)->put_async(&step_token, send_wire);
        tracked = in_flight_.insert(in_flight_.end(), send);
      }
      if (s.recv.active()) {
        const int from = group.members[s.recv.peer];
        int* data = nullptr;
        const sg4::CommPtr recv = mailbox(rank, from)->get_async<int>(&data);
        recv->wait();
        if (modelled) done = recv->get_finish_time() + hop_extra(from, rank, p.costs);
      }
      if (send) {
        send->wait();
        in_flight_.erase(tracked);
        bytes_sent_ += s.send.bytes;
        if (LinkTraffic* traffic = LinkTraffic::active())
          traffic->record(send, hosts_[rank], hosts_[group.members[s.send.peer]], s.send.bytes,
                          static_cast<double>(send_wire));
        if (modelled && !eager)
          done = std::max(done, send->get_finish_time() + hop_extra(rank, group.members[s.send.peer], p.costs));
      }
      if (done > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(done);
    }
  }
}

// Lane groups (NCCL's channels) run independently, as a GPU's channels do: a group posts its step's
// transfers (one send and one receive per lane) and moves on to its next step as soon as all are complete,
// whatever the other groups are doing. Coupling every lane step by step would make each wait for the slowest,
// and a lane that lags a step then shares its links with the others' next step, which a real GPU's channels
// do not suffer from. With a protocol, a transfer is complete its hop wait after SimGrid delivers it; the
// group's next step is posted then, without blocking the other groups.
void PlannedCollective::run_lanes(int rank, const Group& group, int pos, const Prepared& p) {
  const Schedule& schedule = *group.schedule;
  const bool modelled = p.protocol != Protocol::None;
  const bool eager = buffered(schedule, modelled);
  const int lanes = schedule.lanes();
  const int steps = schedule.num_steps(pos);
  struct LaneGroup {
    std::vector<int> lanes;
    int step = 0;          // the step under way (or next to post)
    int pending = 0;       // its transfers not yet complete
    double post_at = 0.0;  // when its next step may be posted
    bool posted = false;
    uint64_t sending = 0;  // payload bytes of the step's sends, counted once they are done
  };
  std::vector<LaneGroup> groups;
  for (int lane = 0; lane < lanes; ++lane) {
    const size_t g = static_cast<size_t>(schedule.lane_group(lane));
    if (groups.size() <= g) groups.resize(g + 1);
    groups[g].lanes.push_back(lane);
  }
  std::vector<int*> received(static_cast<size_t>(lanes), nullptr);
  struct InFlight {
    sg4::CommPtr comm;
    int group;
    double extra;  // the protocol's wait after delivery
    std::list<sg4::CommPtr>::iterator tracked;
    int to = -1;           // a send's receiver (−1 for a receive)
    uint64_t payload = 0;  // a send's payload and wire bytes, for links.csv
    uint64_t wire = 0;
  };
  std::vector<InFlight> flying;
  std::vector<sg4::CommPtr> comms;  // the comms of `flying`, in the same order, for wait_any
  // A group whose wait ends within a picosecond of now may post (the clock after a timed wait can fall an
  // ulp short of the date asked for).
  constexpr double kSlack = 1e-12;

  const auto post = [&](int g) {
    LaneGroup& grp = groups[g];
    grp.posted = true;
    grp.sending = 0;
    const auto add = [&](const sg4::CommPtr& c, double extra, int to = -1, uint64_t payload = 0, uint64_t wire = 0) {
      flying.push_back({c, g, extra, in_flight_.insert(in_flight_.end(), c), to, payload, wire});
      comms.push_back(c);
      ++grp.pending;
    };
    for (const int lane : grp.lanes) {
      const Step s = schedule.lane_step(pos, grp.step, lane);
      if (s.send.active()) {
        const int to = group.members[s.send.peer];
        const uint64_t wire = modelled ? wire_bytes(s.send.bytes, p.costs.bandwidth_fraction) : s.send.bytes;
        add(mailbox(to, rank, g)->put_async(&step_token, wire), modelled && !eager ? hop_extra(rank, to, p.costs) : 0.0,
            to, s.send.bytes, wire);
        grp.sending += s.send.bytes;
      }
      if (s.recv.active()) {
        const int from = group.members[s.recv.peer];
        add(mailbox(rank, from, g)->get_async<int>(&received[lane]), modelled ? hop_extra(from, rank, p.costs) : 0.0);
      }
    }
  };
  const auto next_step = [&](int g) {
    LaneGroup& grp = groups[g];
    ++grp.step;
    grp.posted = false;
    grp.post_at = std::max(grp.post_at, sg4::Engine::get_clock());
  };

  while (true) {
    // Post every group whose wait is over (an empty step is done at once); find the earliest still waiting.
    for (bool again = true; again;) {
      again = false;
      for (size_t g = 0; g < groups.size(); ++g) {
        LaneGroup& grp = groups[g];
        if (grp.posted || grp.step >= steps || grp.post_at > sg4::Engine::get_clock() + kSlack) continue;
        post(static_cast<int>(g));
        if (grp.pending == 0) next_step(static_cast<int>(g));
        again = true;
      }
    }
    double next_post = -1.0;
    for (const LaneGroup& grp : groups)
      if (!grp.posted && grp.step < steps && (next_post < 0.0 || grp.post_at < next_post)) next_post = grp.post_at;
    if (comms.empty()) {
      if (next_post < 0.0) break;
      sg4::this_actor::sleep_until(next_post);
      continue;
    }
    const double timeout = next_post < 0.0 ? -1.0 : std::max(0.0, next_post - sg4::Engine::get_clock());
    const ssize_t done = sg4::Comm::wait_any_for(comms, timeout);
    if (done < 0) continue;  // a group's wait is over
    const InFlight finished = flying[static_cast<size_t>(done)];
    in_flight_.erase(finished.tracked);
    flying.erase(flying.begin() + done);
    comms.erase(comms.begin() + done);
    LaneGroup& grp = groups[static_cast<size_t>(finished.group)];
    if (LinkTraffic* traffic = LinkTraffic::active(); traffic != nullptr && finished.to >= 0)
      traffic->record(finished.comm, hosts_[rank], hosts_[finished.to], finished.payload,
                      static_cast<double>(finished.wire));
    // A receive may complete after its data arrived (the send did not wait for it): the protocol's wait
    // runs from the delivery.
    grp.post_at = std::max({grp.post_at, sg4::Engine::get_clock(), finished.comm->get_finish_time() + finished.extra});
    if (--grp.pending == 0) {
      bytes_sent_ += grp.sending;
      next_step(finished.group);
    }
  }
  // The last steps' transfers are complete once their protocol waits are over too.
  double end = sg4::Engine::get_clock();
  for (const LaneGroup& grp : groups) end = std::max(end, grp.post_at);
  if (end > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(end);
}

}  // namespace dtsim::sim
