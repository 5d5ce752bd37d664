#include "sim/collectives/executor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "sim/world/platform.hpp"

namespace dtsim::sim {
namespace sg4 = simgrid::s4u;

namespace {

// SimGrid refuses null payloads; the collectives carry no data, so every transfer points at this token.
int transfer_token = 0;

// The size whose plan fixes the layout and the flow counts auto decides from. Any size gives the same groups
// and peers; at 1 GiB the pipelines are at their deepest, so auto counts the most transfers a call can need.
constexpr uint64_t kProbeBytes = 1ull << 30;

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g us", s * 1e6);
  return buf;
}

std::string format_rate(double b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g GB/s", b / 1e9);
  return buf;
}

}  // namespace

Fidelity resolve_fidelity(Fidelity requested, uint64_t stepwise_flows, uint64_t aggregated_flows) {
  if (requested != Fidelity::Auto) return requested;
  if (stepwise_flows <= kAutoMaxFlows) return Fidelity::Stepwise;
  if (aggregated_flows <= kAutoMaxFlows) return Fidelity::Aggregated;
  return Fidelity::Analytic;
}

PlannedCollective::PlannedCollective(CollectiveKind kind, Algorithm algorithm, Fidelity requested,
                                     const Platform& platform, std::string name, const CollectiveOptions& options,
                                     PlanBuilder builder)
    : kind_(kind),
      algorithm_(algorithm),
      requested_(requested),
      hosts_(platform.workers),
      name_(std::move(name)),
      options_(options),
      builder_(std::move(builder)) {
  const Plan probe = builder_(kProbeBytes);
  measure_layout(probe);
  for (const Phase& phase : probe.phases)
    for (const Group& g : phase.groups) {
      auto_stepwise_flows_ += g.schedule->stepwise_flows();
      for (int pos = 0; pos < g.schedule->size(); ++pos) auto_aggregated_flows_ += g.schedule->totals(pos).sends.size();
    }
  fidelity_ = resolve_fidelity(requested, auto_stepwise_flows_, auto_aggregated_flows_);
}

void PlannedCollective::measure_layout(const Plan& plan) {
  const int n = ranks();
  seats_.assign(plan.phases.size(), std::vector<Seat>(n));
  links_.assign(plan.phases.size(), AlphaBeta{});
  for (size_t ph = 0; ph < plan.phases.size(); ++ph) {
    std::vector<std::pair<int, int>> flows;  // (from, to) global ranks of the first step
    for (size_t g = 0; g < plan.phases[ph].groups.size(); ++g) {
      const Group& group = plan.phases[ph].groups[g];
      for (size_t pos = 0; pos < group.members.size(); ++pos) {
        seats_[ph][group.members[pos]] = {static_cast<int>(g), static_cast<int>(pos)};
        const int peer = group.schedule->pattern_peer(static_cast<int>(pos));
        if (peer >= 0) flows.push_back({group.members[pos], group.members[peer]});
      }
    }
    // Route them all, count the flows on every link, then take the worst latency and the worst share.
    std::vector<std::vector<sg4::Link*>> routes(flows.size());
    std::unordered_map<sg4::Link*, int> load;
    double alpha = 0.0;
    for (size_t f = 0; f < flows.size(); ++f) {
      double latency = 0.0;
      hosts_[flows[f].first]->route_to(hosts_[flows[f].second], routes[f], &latency);
      alpha = std::max(alpha, latency);
      for (sg4::Link* l : routes[f]) ++load[l];
    }
    double share = std::numeric_limits<double>::infinity();
    for (const auto& route : routes)
      for (sg4::Link* l : route) {
        const bool shared = l->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE;
        share = std::min(share, l->get_bandwidth() / (shared ? load[l] : 1));
      }
    links_[ph] = {alpha, share * options_.bandwidth_efficiency};
  }
}

const PlannedCollective::Prepared& PlannedCollective::prepared(uint64_t bytes) const {
  const auto it = cache_.find(bytes);
  if (it != cache_.end()) {
    it->second.last_used = ++uses_;
    return it->second;
  }
  while (cache_.size() >= kCachedSizes) {
    auto oldest = cache_.end();
    for (auto e = cache_.begin(); e != cache_.end(); ++e)
      if (e->second.users == 0 && (oldest == cache_.end() || e->second.last_used < oldest->second.last_used)) oldest = e;
    if (oldest == cache_.end()) break;
    cache_.erase(oldest);
  }
  Prepared p;
  p.last_used = ++uses_;
  p.plan = builder_(bytes);
  for (size_t ph = 0; ph < p.plan.phases.size(); ++ph) {
    const AlphaBeta& link = links_[ph];
    double seconds = 0.0;
    uint64_t busiest = 0;
    bool any_flow = false;
    for (const Group& g : p.plan.phases[ph].groups) {
      seconds = std::max(seconds, g.schedule->seconds(link));
      if (fidelity_ != Fidelity::Aggregated) continue;
      for (int pos = 0; pos < g.schedule->size(); ++pos) {
        const PeerTotals t = g.schedule->totals(pos);
        uint64_t out = 0, in = 0;
        for (const Transfer& s : t.sends) out += s.bytes;
        for (const Transfer& r : t.recvs) in += r.bytes;
        busiest = std::max({busiest, out, in});
        any_flow = any_flow || !t.sends.empty();
      }
    }
    const double flows = any_flow ? link.alpha + static_cast<double>(busiest) / link.bandwidth : 0.0;
    p.phase_seconds.push_back(seconds);
    p.residual.push_back(std::max(0.0, seconds - flows));
    p.total_seconds += seconds;
  }
  p.total_bytes = p.plan.total_bytes();
  return cache_.emplace(bytes, std::move(p)).first->second;
}

void PlannedCollective::run(int rank, uint64_t bytes) {
  if (ranks() <= 1) return;
  const Prepared& p = prepared(bytes);
  ++p.users;
  switch (fidelity_) {
    case Fidelity::Stepwise: run_stepwise(rank, p); break;
    case Fidelity::Aggregated: run_aggregated(rank, p); break;
    case Fidelity::Analytic:
    case Fidelity::Auto: run_analytic(rank, p); break;
  }
  --p.users;
}

void PlannedCollective::abandon() {
  for (const sg4::CommPtr& c : in_flight_)
    if (c->get_state() == sg4::Activity::State::STARTED) c->cancel();
  in_flight_.clear();
}

void PlannedCollective::run_stepwise(int rank, const Prepared& p) {
  for (size_t ph = 0; ph < p.plan.phases.size(); ++ph) {
    const Seat seat = seats_[ph][rank];
    if (seat.group < 0) continue;
    const Group& group = p.plan.phases[ph].groups[seat.group];
    const Schedule& schedule = *group.schedule;
    const int steps = schedule.num_steps(seat.pos);
    for (int i = 0; i < steps; ++i) {
      const Step s = schedule.step(seat.pos, i);
      sg4::CommPtr send;
      std::list<sg4::CommPtr>::iterator tracked;
      if (s.send.active()) {
        send = mailbox(group.members[s.send.peer], rank)->put_async(&transfer_token, s.send.bytes);
        tracked = in_flight_.insert(in_flight_.end(), send);
      }
      if (s.recv.active()) mailbox(rank, group.members[s.recv.peer])->get<int>();
      if (send) {
        send->wait();
        in_flight_.erase(tracked);
        bytes_sent_ += s.send.bytes;
      }
    }
  }
}

void PlannedCollective::run_aggregated(int rank, const Prepared& p) {
  barrier().wait();
  for (size_t ph = 0; ph < p.plan.phases.size(); ++ph) {
    const Seat seat = seats_[ph][rank];
    if (seat.group >= 0) {
      const Group& group = p.plan.phases[ph].groups[seat.group];
      const PeerTotals t = group.schedule->totals(seat.pos);
      std::vector<sg4::CommPtr> comms;
      std::vector<int*> received(t.recvs.size(), nullptr);
      for (const Transfer& s : t.sends)
        comms.push_back(mailbox(group.members[s.peer], rank)->put_async(&transfer_token, s.bytes));
      for (size_t r = 0; r < t.recvs.size(); ++r)
        comms.push_back(mailbox(rank, group.members[t.recvs[r].peer])->get_async<int>(&received[r]));
      std::vector<std::list<sg4::CommPtr>::iterator> tracked;
      for (const sg4::CommPtr& c : comms) tracked.push_back(in_flight_.insert(in_flight_.end(), c));
      sg4::Comm::wait_all(comms);
      for (const auto& it : tracked) in_flight_.erase(it);
      for (const Transfer& s : t.sends) bytes_sent_ += s.bytes;
    }
    barrier().wait();
    if (p.residual[ph] > 0.0) sg4::this_actor::sleep_for(p.residual[ph]);
  }
}

void PlannedCollective::run_analytic(int rank, const Prepared& p) {
  barrier().wait();
  if (rank == 0) bytes_sent_ += p.total_bytes;  // the bytes the algorithm would move
  if (p.total_seconds > 0.0) sg4::this_actor::sleep_for(p.total_seconds);
}

sg4::Mailbox* PlannedCollective::mailbox(int to, int from) {
  const uint64_t key = (static_cast<uint64_t>(to) << 32) | static_cast<uint32_t>(from);
  const auto it = mailboxes_.find(key);
  if (it != mailboxes_.end()) return it->second;
  sg4::Mailbox* mb = sg4::Mailbox::by_name(name_ + "/" + std::to_string(to) + "<" + std::to_string(from));
  mailboxes_.emplace(key, mb);
  return mb;
}

sg4::Barrier& PlannedCollective::barrier() {
  if (!barrier_) barrier_ = sg4::Barrier::create(static_cast<unsigned>(ranks()));
  return *barrier_;
}

std::string PlannedCollective::describe() const {
  std::string line = std::string(to_string(algorithm_)) + " " + to_string(kind_) + " over " +
                     std::to_string(ranks()) + " ranks, " + to_string(fidelity_);
  if (requested_ == Fidelity::Auto)
    line += " (auto: " + std::to_string(auto_stepwise_flows_) + " stepwise flows per call)";
  for (size_t ph = 0; ph < links_.size(); ++ph) {
    const bool several = links_.size() > 1;
    line += several ? "; phase " + std::to_string(ph + 1) + ": " : "; ";
    line += std::isinf(links_[ph].bandwidth) ? "no transfers"
                                             : "alpha " + format_seconds(links_[ph].alpha) + ", B " +
                                                   format_rate(links_[ph].bandwidth);
  }
  return line;
}

}  // namespace dtsim::sim
