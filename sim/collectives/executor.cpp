#include "sim/collectives/executor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <queue>
#include <stdexcept>

#include <xbt/config.hpp>

#include "sim/collectives/fluid_replay.hpp"
#include "sim/collectives/nccl_tuning.hpp"
#include "sim/collectives/protocol.hpp"
#include "sim/world/link_traffic.hpp"
#include "sim/world/platform.hpp"

namespace dtsim::sim {
namespace sg4 = simgrid::s4u;

namespace {

// A key for an ordered pair of ranks (routes, pattern flows).
uint64_t pair_key(int from, int to) { return (static_cast<uint64_t>(from) << 32) | static_cast<uint32_t>(to); }

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

Fidelity resolve_fidelity(Fidelity requested, uint64_t stepwise_flows, uint64_t aggregated_flows,
                          uint64_t calls_per_step, uint64_t stepwise_cap) {
  if (requested != Fidelity::Auto) return requested;
  const uint64_t calls = std::max<uint64_t>(1, calls_per_step);
  const uint64_t stepwise_budget = stepwise_cap > 0 ? std::min(kAutoMaxFlows, stepwise_cap) : kAutoMaxFlows;
  if (stepwise_flows <= stepwise_budget / calls) return Fidelity::Stepwise;
  if (aggregated_flows <= kAutoMaxFlows / calls) return Fidelity::Aggregated;
  return Fidelity::Analytic;
}

uint64_t numerics_stepwise_cap(double numerics_flops_per_step) {
  const double cap = kStepwiseShareOfNumerics * numerics_flops_per_step / kNumericsFlopsPerStepwiseTransfer;
  if (!(cap >= 1.0)) return 1;
  return cap >= static_cast<double>(kAutoMaxFlows) ? kAutoMaxFlows : static_cast<uint64_t>(cap);
}

PlannedCollective::PlannedCollective(CollectiveKind kind, Algorithm algorithm, Fidelity requested,
                                     const Platform& platform, std::string name, const CollectiveOptions& options,
                                     PlanBuilder builder)
    : kind_(kind),
      algorithm_(algorithm),
      requested_(requested),
      hosts_(platform.workers),
      calibration_(platform.calibration),
      shared_routes_(platform.routes ? platform.routes : std::make_shared<RouteCache>()),
      shared_links_(platform.analytic_links),
      name_(std::move(name)),
      options_(options),
      builder_(std::move(builder)) {
  tcp_gamma_ = simgrid::config::get_value<double>("network/TCP-gamma");
  node_of_ = platform.node_of_worker;
  node_of_.resize(hosts_.size(), 0);
  nccl_topology_ = nccl_topology(platform.workers_of_node, options);
  hop_context_.one_gpu_per_node = !platform.workers_of_node.empty();
  for (const auto& node : platform.workers_of_node) hop_context_.one_gpu_per_node &= node.size() == 1;
  const Plan probe = builder_(kProbeBytes);
  measure_layout(probe);
  auto_stepwise_flows_ = probe.stepwise_flows();
  for (const Phase& phase : probe.phases)
    for (const Group& g : phase.groups)
      for (int pos = 0; pos < g.schedule->size(); ++pos) auto_aggregated_flows_ += g.schedule->totals(pos).sends.size();
  fidelity_ = resolve_fidelity(requested, auto_stepwise_flows_, auto_aggregated_flows_, options.calls_per_step,
                               options.auto_stepwise_cap);
}

HopClass PlannedCollective::hop_class(int from, int to) const {
  return node_of_[from] == node_of_[to] ? options_.intra_node_hops : options_.inter_node_hops;
}

double PlannedCollective::hop_extra(int from, int to, const ProtocolCosts& costs) const {
  const double least = costs.hop(hop_class(from, to));
  if (least <= 0.0) return 0.0;
  return std::max(0.0, least - cached_route(from, to).latency);
}

void PlannedCollective::measure_layout(const Plan& plan) {
  const int n = ranks();
  seats_.assign(plan.phases.size(), std::vector<Seat>(n));
  links_.assign(plan.phases.size(), AlphaBeta{});
  phase_hops_.assign(plan.phases.size(), PhaseHops{});
  fanout_.assign(plan.phases.size(), 1);
  level_links_.assign(plan.phases.size(), {});
  pattern_rates_.assign(plan.phases.size(), {});
  for (size_t ph = 0; ph < plan.phases.size(); ++ph) {
    std::vector<std::pair<int, int>> flows;  // (from, to) global ranks of the first step
    for (size_t g = 0; g < plan.phases[ph].groups.size(); ++g) {
      const Group& group = plan.phases[ph].groups[g];
      for (size_t pos = 0; pos < group.members.size(); ++pos) {
        seats_[ph][group.members[pos]] = {static_cast<int>(g), static_cast<int>(pos)};
        const std::vector<int> peers = group.schedule->pattern_peers(static_cast<int>(pos));
        fanout_[ph] = std::max(fanout_[ph], static_cast<int>(peers.size()));
        for (const int peer : peers) flows.push_back({group.members[pos], group.members[peer]});
      }
    }
    // Route them all, count the flows on every link, then take the worst latency and the worst share.
    std::vector<const RouteCache::Route*> routes(flows.size());
    std::vector<double> latencies(flows.size(), 0.0);
    std::unordered_map<sg4::Link*, int> load;
    double alpha = 0.0;
    for (size_t f = 0; f < flows.size(); ++f) {
      routes[f] = &shared_routes_->route(hosts_[flows[f].first], hosts_[flows[f].second], calibration_.get());
      double& latency = latencies[f];
      latency = routes[f]->latency;
      alpha = std::max(alpha, latency);
      const HopClass c = hop_class(flows[f].first, flows[f].second);
      double& worst = phase_hops_[ph].route[static_cast<int>(c)];
      worst = std::max(worst, latency);
      hop_context_.crosses_network |= c == HopClass::Network;
      any_pcie_hop_ |= c == HopClass::PCIe;
      for (sg4::Link* l : routes[f]->links) ++load[l];
    }
    // Each flow gets its bottleneck share times its route's bandwidth factor, as SimGrid gives it (the
    // calibration: NVLink hops at NVLink's efficiency, network hops at the network's). Also per level:
    // flows between two GPUs of a node, and flows between nodes.
    double rate = std::numeric_limits<double>::infinity();
    AlphaBeta level[2] = {{0.0, std::numeric_limits<double>::infinity()}, {0.0, std::numeric_limits<double>::infinity()}};
    bool seen[2] = {false, false};
    for (size_t f = 0; f < routes.size(); ++f) {
      double share = std::numeric_limits<double>::infinity();
      for (sg4::Link* l : routes[f]->links) {
        const bool shared = l->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE;
        share = std::min(share, l->get_bandwidth() / (shared ? load[l] : 1));
      }
      const double factor = calibration_ ? routes[f]->factor : options_.bandwidth_efficiency;
      // SimGrid caps every flow at its TCP window over the round trip (a WAN's, where one is set), the
      // bandwidth factor applying to the cap as to the links.
      if (latencies[f] > 0.0) share = std::min(share, tcp_gamma_ / (2 * latencies[f]));
      rate = std::min(rate, share * factor);
      pattern_rates_[ph][pair_key(flows[f].first, flows[f].second)] = share * factor;
      const int lv = node_of_[flows[f].first] == node_of_[flows[f].second] ? 0 : 1;
      seen[lv] = true;
      level[lv].alpha = std::max(level[lv].alpha, latencies[f]);
      level[lv].bandwidth = std::min(level[lv].bandwidth, share * factor);
    }
    links_[ph] = {alpha, rate};
    for (int lv = 0; lv < 2; ++lv)
      if (!seen[lv]) level[lv] = links_[ph];
    level_links_[ph] = {level[0], level[1]};
  }
}

const PlannedCollective::CachedRoute& PlannedCollective::cached_route(int from, int to) const {
  const uint64_t key = pair_key(from, to);
  auto it = routes_.find(key);
  if (it == routes_.end()) {
    const RouteCache::Route& shared = shared_routes_->route(hosts_[from], hosts_[to], calibration_.get());
    CachedRoute r;
    r.links = shared.links;
    r.latency = shared.latency;
    r.factor = calibration_ ? shared.factor : options_.bandwidth_efficiency;
    it = routes_.emplace(key, std::move(r)).first;
  }
  return it->second;
}


const PlannedCollective::Prepared& PlannedCollective::prepared(uint64_t bytes) const {
  PlanCache& cache = *plans_;
  const auto it = cache.by_size.find(bytes);
  if (it != cache.by_size.end()) {
    it->second.last_used = ++cache.uses;
    return it->second;
  }
  while (cache.by_size.size() >= cache.capacity) {
    auto oldest = cache.by_size.end();
    for (auto e = cache.by_size.begin(); e != cache.by_size.end(); ++e)
      if (e->second.users == 0 && (oldest == cache.by_size.end() || e->second.last_used < oldest->second.last_used))
        oldest = e;
    if (oldest == cache.by_size.end()) break;
    cache.by_size.erase(oldest);
  }
  Prepared p;
  p.last_used = ++cache.uses;
  p.plan = builder_(bytes);
  std::optional<NcclEstimate> nccl;
  if (options_.protocol == Protocol::Auto && options_.tuner == CollectiveTuner::Nccl && nccl_tunes(kind_, algorithm_))
    nccl = nccl_choice(kind_, bytes, nccl_topology_, {algorithm_}, auto_protocol_candidates(kind_, any_pcie_hop_));
  if (nccl) {
    // NCCL's choice: the protocol its tuning model predicts fastest for this size.
    p.protocol = nccl->protocol;
    time_plan(p.plan, protocol_costs(p.protocol, algorithm_, kind_, hop_context_), p);
  } else if (options_.protocol == Protocol::Auto) {
    // The protocol whose simulated prediction is least for this size (the first on a tie).
    bool first = true;
    for (const Protocol candidate : auto_protocol_candidates(kind_, any_pcie_hop_)) {
      Prepared trial;
      trial.protocol = candidate;
      time_plan(p.plan, protocol_costs(candidate, algorithm_, kind_, hop_context_), trial);
      if (first || trial.total_seconds < p.total_seconds) {
        p.protocol = candidate;
        p.costs = trial.costs;
        p.phase_seconds = std::move(trial.phase_seconds);
        p.residual = std::move(trial.residual);
        p.until_replayed = std::move(trial.until_replayed);
        p.total_seconds = trial.total_seconds;
      }
      first = false;
    }
  } else {
    p.protocol = options_.protocol;
    time_plan(p.plan, protocol_costs(options_.protocol, algorithm_, kind_, hop_context_), p);
  }
  p.total_bytes = p.plan.total_bytes();
  return cache.by_size.emplace(bytes, std::move(p)).first->second;
}

void PlannedCollective::time_plan(const Plan& plan, const ProtocolCosts& costs, Prepared& p) const {
  p.costs = costs;
  p.phase_seconds.clear();
  p.residual.clear();
  p.until_replayed.clear();
  p.total_seconds = costs.call_latency;
  // Schedules whose hops differ (timed_by_replay): the whole plan replayed on the platform's links, each
  // phase charged from when the previous one ended to when its last rank finished.
  std::vector<double> replayed_end;
  if (plan.timed_by_replay() && plan.stepwise_flows() <= kReplayMaxTransfers) {
    const std::unique_ptr<ReplayNetwork> network =
        make_fluid_replay([this](int from, int to) -> const ReplayRoute& { return cached_route(from, to); },
                          [&](int from, int to) { return hop_extra(from, to, costs); }, costs.bandwidth_fraction,
                          tcp_gamma_);
    replayed_end = replay_plan(plan, ranks(), *network, p.protocol != Protocol::None);
  }
  for (size_t ph = 0; ph < plan.phases.size(); ++ph) {
    // A step costs max(route latency, the protocol's least hop latency) + wire bytes / bandwidth.
    p.until_replayed.push_back(!replayed_end.empty());
    AlphaBeta link = links_[ph];
    for (int c = 0; c < 3; ++c)
      if (phase_hops_[ph].route[c] >= 0.0)
        link.alpha = std::max(link.alpha, costs.hop_latency[c]);
    link.bandwidth *= costs.bandwidth_fraction;
    double seconds = 0.0;
    uint64_t busiest = 0;
    bool any_flow = false;
    // Per level, for schedules timed so: inside a node the intra-node hops' least latency, between nodes the
    // network's.
    const auto adjusted = [&](AlphaBeta l, HopClass c) {
      l.alpha = std::max(l.alpha, costs.hop(c));
      l.bandwidth *= costs.bandwidth_fraction;
      return l;
    };
    for (const Group& g : plan.phases[ph].groups) {
      if (!replayed_end.empty()) {
        seconds = replayed_end[ph] - (ph > 0 ? replayed_end[ph - 1] : 0.0);
      } else if (g.schedule->ring_chunk(0) > 0.0) {
        seconds = std::max(seconds, ring_seconds(g, ph, costs));
      } else {
        seconds = std::max(seconds, g.schedule->timed_by_level()
                                        ? g.schedule->seconds_by_level(
                                              adjusted(level_links_[ph][0], options_.intra_node_hops),
                                              adjusted(level_links_[ph][1], options_.inter_node_hops))
                                        : g.schedule->seconds(link));
      }
      if (fidelity_ == Fidelity::Stepwise) continue;
      for (int pos = 0; pos < g.schedule->size(); ++pos) {
        const PeerTotals t = g.schedule->totals(pos);
        uint64_t out = 0, in = 0;
        for (const Transfer& s : t.sends) out += s.bytes;
        for (const Transfer& r : t.recvs) in += r.bytes;
        busiest = std::max({busiest, out, in});
        any_flow = any_flow || !t.sends.empty();
      }
    }
    // Aggregated: the flows carry the wire bytes at the route's latency; the residual sleep adds the rest.
    // A rank's pattern flows run side by side, each at the measured share.
    const double flows = any_flow ? links_[ph].alpha + static_cast<double>(wire_bytes(busiest, costs.bandwidth_fraction)) /
                                                             (links_[ph].bandwidth * fanout_[ph])
                                  : 0.0;
    p.phase_seconds.push_back(seconds);
    p.residual.push_back(std::max(0.0, seconds - flows));
    // Analytic: the part of the phase the links set (its flows less their latency), which concurrent calls share.
    p.link_seconds += std::min(seconds, std::max(0.0, flows - (any_flow ? links_[ph].alpha : 0.0)));
    p.total_seconds += seconds;
  }
}

double PlannedCollective::ring_seconds(const Group& g, size_t ph, const ProtocolCosts& costs) const {
  const Schedule& schedule = *g.schedule;
  const int n = schedule.size();
  double seconds = 0.0;
  std::vector<RingHop> hops(static_cast<size_t>(n));
  for (int lane = 0; lane < schedule.lanes(); ++lane) {
    const double chunk = schedule.ring_chunk(lane);
    for (int pos = 0; pos < n; ++pos) {
      const int from = g.members[pos];
      const int to = g.members[schedule.lane_step(pos, 0, lane).send.peer];
      // The hop's own share where the probe measured it (a ring's hops are its first step's flows).
      const auto measured = pattern_rates_[ph].find(pair_key(from, to));
      const double rate = measured != pattern_rates_[ph].end()
                              ? measured->second
                              : level_links_[ph][node_of_[from] == node_of_[to] ? 0 : 1].bandwidth;
      const double route = cached_route(from, to).latency;
      const double moving = chunk / (rate * costs.bandwidth_fraction);
      hops[static_cast<size_t>(pos)] = {route + moving, route + moving + hop_extra(from, to, costs)};
    }
    seconds = std::max(seconds, ring_recurrence_seconds(hops, schedule.num_steps(0)));
  }
  return seconds;
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
  // Sends delivered to a rank that will never take them must not be taken by the next call's receives.
  for (const auto& [key, mb] : mailboxes_) {
    mb->set_receiver(nullptr);
    mb->clear();
  }
}

void PlannedCollective::run_aggregated(int rank, const Prepared& p) {
  barrier().wait();
  if (p.costs.call_latency > 0.0) sg4::this_actor::sleep_for(p.costs.call_latency);
  for (size_t ph = 0; ph < p.plan.phases.size(); ++ph) {
    const double phase_start = sg4::Engine::get_clock();  // the same on every rank (they left a barrier)
    const Seat seat = seats_[ph][rank];
    if (seat.group >= 0) {
      const Group& group = p.plan.phases[ph].groups[seat.group];
      const PeerTotals t = group.schedule->totals(seat.pos);
      std::vector<sg4::CommPtr> comms;
      std::vector<int*> received(t.recvs.size(), nullptr);
      for (const Transfer& s : t.sends)
        comms.push_back(mailbox(group.members[s.peer], rank)
                            ->put_async(&transfer_token, wire_bytes(s.bytes, p.costs.bandwidth_fraction)));
      for (size_t r = 0; r < t.recvs.size(); ++r)
        comms.push_back(mailbox(rank, group.members[t.recvs[r].peer])->get_async<int>(&received[r]));
      std::vector<std::list<sg4::CommPtr>::iterator> tracked;
      for (const sg4::CommPtr& c : comms) tracked.push_back(in_flight_.insert(in_flight_.end(), c));
      sg4::Comm::wait_all(comms);
      for (const auto& it : tracked) in_flight_.erase(it);
      for (const Transfer& s : t.sends) bytes_sent_ += s.bytes;
      if (LinkTraffic* traffic = LinkTraffic::active())
        for (size_t i = 0; i < t.sends.size(); ++i)
          traffic->record(comms[i], hosts_[rank], hosts_[group.members[t.sends[i].peer]], t.sends[i].bytes,
                          static_cast<double>(wire_bytes(t.sends[i].bytes, p.costs.bandwidth_fraction)));
    }
    barrier().wait();
    if (p.until_replayed[ph]) {
      // A replayed phase's flows have different routes and shares, so their time without other traffic
      // has no simple form to subtract: the phase lasts its replayed time, or longer if traffic slowed
      // its flows past it.
      if (sg4::Engine::get_clock() < phase_start + p.phase_seconds[ph]) sg4::this_actor::sleep_until(phase_start + p.phase_seconds[ph]);
    } else if (p.residual[ph] > 0.0) {
      sg4::this_actor::sleep_for(p.residual[ph]);
    }
  }
}

void PlannedCollective::stand_in_for_all() {
  if (!can_stand_in_for_all()) throw std::logic_error(name_ + ": only an analytic collective lets one rank stand in");
  stand_in_ = true;
}

void PlannedCollective::share_plans_with(Collective& sibling) {
  auto* other = dynamic_cast<PlannedCollective*>(&sibling);
  if (other == nullptr || other == this || other->plans_ == plans_) return;
  if (other->kind_ != kind_ || other->algorithm_ != algorithm_ || other->fidelity_ != fidelity_ ||
      other->hosts_ != hosts_ || other->options_.protocol != options_.protocol)
    return;
  plans_ = other->plans_;
  plans_->capacity += kCachedSizes;
}

void PlannedCollective::run_analytic(int rank, const Prepared& p) {
  if (!stand_in_) barrier().wait();
  if (rank == 0) {
    bytes_sent_ += p.total_bytes;  // the bytes the algorithm would move
    if (LinkTraffic* traffic = LinkTraffic::active()) record_planned_traffic(*traffic, p);
  }
  if (!shared_links_) {
    if (p.total_seconds > 0.0) sg4::this_actor::sleep_for(p.total_seconds);
    return;
  }
  // Rank 0 times the call for all: its latencies alone, then its link-bound part shared with the other calls
  // on these ranks in progress meanwhile (alone, the two add up to the closed form). The others wait for it.
  if (rank == 0) {
    const double latency = p.total_seconds - p.link_seconds;
    if (latency > 0.0) sg4::this_actor::sleep_for(latency);
    shared_links_->serve(hosts_, p.link_seconds);
  }
  if (!stand_in_) barrier().wait();
}

// An analytic call moves no SimGrid flows; links.csv still shows the transfers its plan stands for, each
// phase's spread over the phase's modelled time.
void PlannedCollective::record_planned_traffic(LinkTraffic& traffic, const Prepared& p) const {
  double t = sg4::Engine::get_clock() + p.costs.call_latency;
  for (size_t ph = 0; ph < p.plan.phases.size(); ++ph) {
    const double end = t + p.phase_seconds[ph];
    for (const Group& group : p.plan.phases[ph].groups)
      for (size_t pos = 0; pos < group.members.size(); ++pos)
        for (const Transfer& s : group.schedule->totals(static_cast<int>(pos)).sends)
          traffic.record(hosts_[group.members[pos]], hosts_[group.members[s.peer]], s.bytes,
                         static_cast<double>(wire_bytes(s.bytes, p.costs.bandwidth_fraction)), t, end);
    t = end;
  }
}

sg4::Mailbox* PlannedCollective::mailbox(int to, int from, int group) {
  // Ranks stay below 2^24 (cluster.workers ≤ 65536), groups below 2^16.
  const uint64_t key = (static_cast<uint64_t>(group) << 48) | (static_cast<uint64_t>(to) << 24) | static_cast<uint64_t>(from);
  const auto it = mailboxes_.find(key);
  if (it != mailboxes_.end()) return it->second;
  sg4::Mailbox* mb = sg4::Mailbox::by_name(name_ + "/" + std::to_string(to) + "<" + std::to_string(from) +
                                           (group > 0 ? "#" + std::to_string(group) : ""));
  mailboxes_.emplace(key, mb);
  return mb;
}

std::string PlannedCollective::variant(uint64_t bytes) const {
  const Protocol protocol = prepared(bytes).protocol;
  std::string text = to_string(algorithm_);
  if (protocol != Protocol::None) text += std::string("/") + to_string(protocol);
  return text;
}

std::optional<double> PlannedCollective::nccl_predicted_seconds(uint64_t bytes) const {
  const std::optional<NcclEstimate> e = nccl_estimate(kind_, algorithm_, prepared(bytes).protocol, bytes, nccl_topology_);
  if (!e) return std::nullopt;
  return e->time_us * 1e-6;
}

sg4::Barrier& PlannedCollective::barrier() {
  if (!barrier_) barrier_ = sg4::Barrier::create(static_cast<unsigned>(ranks()));
  return *barrier_;
}

// The header's alpha and B are a steady-state step's worst route latency and its slowest flow's share of the
// links it crosses ("per flow": an all-to-all's 16 flows through one NIC each get a sixteenth of it).
std::string PlannedCollective::describe() const {
  std::string line = std::string(to_string(algorithm_)) + " " + to_string(kind_) + " over " +
                     std::to_string(ranks()) + " ranks, " + to_string(fidelity_);
  if (requested_ == Fidelity::Auto)
    line += " (auto: " + std::to_string(auto_stepwise_flows_) + " stepwise flows per call)";
  if (options_.protocol != Protocol::None)
    line += std::string(", protocol ") + to_string(options_.protocol) +
            (options_.protocol != Protocol::Auto       ? ""
             : options_.tuner == CollectiveTuner::Nccl && nccl_tunes(kind_, algorithm_) ? " (NCCL's tuner per size)"
                                                                                        : " (the fastest per size)");
  for (size_t ph = 0; ph < links_.size(); ++ph) {
    const bool several = links_.size() > 1;
    line += several ? "; phase " + std::to_string(ph + 1) + ": " : "; ";
    line += std::isinf(links_[ph].bandwidth) ? "no transfers"
                                             : "alpha " + format_seconds(links_[ph].alpha) + ", B " +
                                                   format_rate(links_[ph].bandwidth) + " per flow";
  }
  return line;
}

}  // namespace dtsim::sim
