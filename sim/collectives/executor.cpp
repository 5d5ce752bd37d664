#include "sim/collectives/executor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <queue>

#include <xbt/config.hpp>

#include "sim/collectives/protocol.hpp"
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
      calibration_(platform.calibration),
      name_(std::move(name)),
      options_(options),
      builder_(std::move(builder)) {
  tcp_gamma_ = simgrid::config::get_value<double>("network/TCP-gamma");
  node_of_ = platform.node_of_worker;
  node_of_.resize(hosts_.size(), 0);
  hop_context_.one_gpu_per_node = !platform.workers_of_node.empty();
  for (const auto& node : platform.workers_of_node) hop_context_.one_gpu_per_node &= node.size() == 1;
  const Plan probe = builder_(kProbeBytes);
  measure_layout(probe);
  auto_stepwise_flows_ = probe.stepwise_flows();
  for (const Phase& phase : probe.phases)
    for (const Group& g : phase.groups)
      for (int pos = 0; pos < g.schedule->size(); ++pos) auto_aggregated_flows_ += g.schedule->totals(pos).sends.size();
  fidelity_ = resolve_fidelity(requested, auto_stepwise_flows_, auto_aggregated_flows_);
}

HopClass PlannedCollective::hop_class(int from, int to) const {
  return node_of_[from] == node_of_[to] ? options_.intra_node_hops : options_.inter_node_hops;
}

double PlannedCollective::hop_extra(int from, int to, const ProtocolCosts& costs) {
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
    std::vector<std::vector<sg4::Link*>> routes(flows.size());
    std::vector<double> latencies(flows.size(), 0.0);
    std::unordered_map<sg4::Link*, int> load;
    double alpha = 0.0;
    for (size_t f = 0; f < flows.size(); ++f) {
      double& latency = latencies[f];
      hosts_[flows[f].first]->route_to(hosts_[flows[f].second], routes[f], &latency);
      alpha = std::max(alpha, latency);
      const HopClass c = hop_class(flows[f].first, flows[f].second);
      double& worst = phase_hops_[ph].route[static_cast<int>(c)];
      worst = std::max(worst, latency);
      hop_context_.crosses_network |= c == HopClass::Network;
      any_pcie_hop_ |= c == HopClass::PCIe;
      for (sg4::Link* l : routes[f]) ++load[l];
    }
    // Each flow gets its bottleneck share times its route's bandwidth factor, as SimGrid gives it (the
    // calibration: NVLink hops at NVLink's efficiency, network hops at the network's). Also per level:
    // flows between two GPUs of a node, and flows between nodes.
    double rate = std::numeric_limits<double>::infinity();
    AlphaBeta level[2] = {{0.0, std::numeric_limits<double>::infinity()}, {0.0, std::numeric_limits<double>::infinity()}};
    bool seen[2] = {false, false};
    for (size_t f = 0; f < routes.size(); ++f) {
      double share = std::numeric_limits<double>::infinity();
      for (sg4::Link* l : routes[f]) {
        const bool shared = l->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE;
        share = std::min(share, l->get_bandwidth() / (shared ? load[l] : 1));
      }
      const double factor = calibration_ ? calibration_->factor(routes[f]) : options_.bandwidth_efficiency;
      // SimGrid caps every flow at its TCP window over the round trip (a WAN's, where one is set), the
      // bandwidth factor applying to the cap as to the links.
      if (latencies[f] > 0.0) share = std::min(share, tcp_gamma_ / (2 * latencies[f]));
      rate = std::min(rate, share * factor);
      pattern_rates_[ph][(static_cast<uint64_t>(flows[f].first) << 32) | static_cast<uint32_t>(flows[f].second)] = share * factor;
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
  const uint64_t key = (static_cast<uint64_t>(from) << 32) | static_cast<uint32_t>(to);
  auto it = routes_.find(key);
  if (it == routes_.end()) {
    CachedRoute r;
    hosts_[from]->route_to(hosts_[to], r.links, &r.latency);
    r.factor = calibration_ ? calibration_->factor(r.links) : options_.bandwidth_efficiency;
    it = routes_.emplace(key, std::move(r)).first;
  }
  return it->second;
}

namespace {

// The platform's links as a replay sees them: a fluid model of SimGrid's CM02. A transfer waits its route's
// latency, then moves its wire bytes; re-shared whenever one starts moving or is done; then, with a protocol,
// its receiver waits what the protocol's hop latency has beyond the route's. The sharing is CM02's: weighted
// max-min fairness gives each moving transfer a share of every link it crosses (a fat pipe is not shared;
// where transfers share a bottleneck, each share is inversely proportional to its route's latency, CM02's
// model of TCP's bias against long round trips), bounded by its route's slowest fat pipe and SimGrid's TCP
// window over the round trip; the transfer moves at its share times its route's bandwidth factor. (The
// factor scales the rate, not the share: two transfers of different factors on one link get equal shares and
// move at different rates.) A change re-shares only the transfers that share links with the one that
// changed, directly or through others.
class FluidReplay final : public ReplayNetwork {
 public:
  using RouteOf = std::function<const PlannedCollective::CachedRoute&(int from, int to)>;
  using LatencyOf = std::function<double(int from, int to)>;  // the protocol's least hop latency

  FluidReplay(RouteOf route_of, LatencyOf least_latency, double bandwidth_fraction, double tcp_gamma)
      : route_of_(std::move(route_of)), least_latency_(std::move(least_latency)), fraction_(bandwidth_fraction),
        tcp_gamma_(tcp_gamma) {}

  void start(const std::vector<ReplayTransfer>& batch, const std::vector<size_t>& ids, double now) override {
    for (size_t i = 0; i < batch.size(); ++i) {
      const PlannedCollective::CachedRoute& r = route_of_(batch[i].from, batch[i].to);
      Flow f;
      f.id = ids[i];
      f.factor = r.factor;
      f.penalty = std::max(r.latency, 1e-12);
      if (r.latency > 0.0) f.bound = tcp_gamma_ / (2 * r.latency);  // SimGrid's TCP window cap
      f.remaining = static_cast<double>(wire_bytes(batch[i].bytes, fraction_));
      if (receive_wait_.size() <= ids[i]) receive_wait_.resize(ids[i] + 1, 0.0);
      receive_wait_[ids[i]] = std::max(0.0, least_latency_(batch[i].from, batch[i].to) - r.latency);
      for (sg4::Link* l : r.links) {
        const int link = link_index(l);
        if (links_[static_cast<size_t>(link)].shared)
          f.links.push_back(link);
        else
          f.bound = std::min(f.bound, links_[static_cast<size_t>(link)].capacity);
      }
      flows_.push_back(std::move(f));
      schedule(static_cast<int>(flows_.size() - 1), now + r.latency);
    }
  }

  double next_end() const override {
    while (!events_.empty() && stale(events_.top())) events_.pop();
    return events_.empty() ? std::numeric_limits<double>::infinity() : events_.top().at;
  }

  double receive_wait(size_t id) const override { return id < receive_wait_.size() ? receive_wait_[id] : 0.0; }

  std::vector<size_t> advance() override {
    const double now = next_end();
    std::vector<size_t> done;
    std::vector<int> changed;  // links whose moving transfers changed
    while (!events_.empty() && (stale(events_.top()) || events_.top().at <= now)) {
      const Event e = events_.top();
      events_.pop();
      if (stale(e)) continue;
      Flow& f = flows_[static_cast<size_t>(e.flow)];
      if (f.state == State::Latency) {  // starts moving its bytes
        f.state = State::Moving;
        f.last = now;
        if (f.remaining <= 0.0 || f.links.empty()) {
          if (f.links.empty() && f.remaining > 0.0) {  // fat pipes only: its own bound, no one to share with
            f.rate = f.bound * f.factor;
            schedule(e.flow, now + f.remaining / f.rate);
            continue;
          }
          finish_moving(e.flow, now, done);
          continue;
        }
        for (const int l : f.links) links_[static_cast<size_t>(l)].moving.push_back(e.flow);
        changed.insert(changed.end(), f.links.begin(), f.links.end());
      } else if (f.state == State::Moving) {
        for (const int l : f.links) {
          std::vector<int>& moving = links_[static_cast<size_t>(l)].moving;
          moving.erase(std::find(moving.begin(), moving.end(), e.flow));
        }
        changed.insert(changed.end(), f.links.begin(), f.links.end());
        f.remaining = 0.0;
        finish_moving(e.flow, now, done);
      }
    }
    if (!changed.empty()) reshare(changed, now);
    return done;
  }

 private:
  enum class State { Latency, Moving, Done };
  struct Flow {
    size_t id = 0;
    std::vector<int> links;  // shared links of its route
    double factor = 1.0;     // the route's bandwidth factor: the rate is the share times it
    double penalty = 1.0;    // CM02's share weight: the route's latency (a longer route gets less)
    double bound = std::numeric_limits<double>::infinity();  // on the share: fat pipes and the TCP window
    double remaining = 0.0;  // wire bytes
    double rate = 0.0;
    double last = 0.0;       // when `remaining` was last brought up to date
    State state = State::Latency;
    int version = 0;         // of its pending event
    bool fixed = false;      // scratch, for resharing
  };
  struct Link {
    double capacity = 0.0;
    bool shared = true;
    std::vector<int> moving;  // flows moving bytes across it
    bool seen = false;        // scratch, for resharing
  };
  struct Event {
    double at;
    int flow;
    int version;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return a.at > b.at || (a.at == b.at && a.flow > b.flow); }
  };

  int link_index(sg4::Link* l) {
    const auto [it, added] = link_ids_.emplace(l, static_cast<int>(links_.size()));
    if (added) links_.push_back({l->get_bandwidth(), l->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE, {}, false});
    return it->second;
  }
  bool stale(const Event& e) const { return flows_[static_cast<size_t>(e.flow)].version != e.version; }
  void schedule(int flow, double at) {
    Flow& f = flows_[static_cast<size_t>(flow)];
    events_.push({at, flow, ++f.version});
  }
  void finish_moving(int flow, double /*now*/, std::vector<size_t>& done) {
    Flow& f = flows_[static_cast<size_t>(flow)];
    f.state = State::Done;
    ++f.version;
    done.push_back(f.id);
  }

  // Max-min fair rates, by progressive filling, for the moving transfers connected to `seeds` through shared
  // links; their completion events move accordingly.
  void reshare(const std::vector<int>& seeds, double now) {
    std::vector<int> component_links, component_flows;
    std::vector<int> queue;
    for (const int l : seeds)
      if (!links_[static_cast<size_t>(l)].seen) {
        links_[static_cast<size_t>(l)].seen = true;
        queue.push_back(l);
      }
    while (!queue.empty()) {
      const int l = queue.back();
      queue.pop_back();
      component_links.push_back(l);
      for (const int fl : links_[static_cast<size_t>(l)].moving) {
        Flow& f = flows_[static_cast<size_t>(fl)];
        if (f.fixed) continue;
        f.fixed = true;  // used as "visited" here
        component_flows.push_back(fl);
        for (const int other : f.links)
          if (!links_[static_cast<size_t>(other)].seen) {
            links_[static_cast<size_t>(other)].seen = true;
            queue.push_back(other);
          }
      }
    }
    for (const int l : component_links) links_[static_cast<size_t>(l)].seen = false;
    // Bring each transfer's bytes up to now at its old rate, then fill.
    std::unordered_map<int, std::pair<double, double>> room;  // link → (capacity left, Σ 1/penalty of unfixed flows)
    for (const int fl : component_flows) {
      Flow& f = flows_[static_cast<size_t>(fl)];
      f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.last));
      f.last = now;
      f.fixed = false;
      for (const int l : f.links) {
        auto [it, added] = room.emplace(l, std::make_pair(links_[static_cast<size_t>(l)].capacity, 0.0));
        it->second.second += 1.0 / f.penalty;
      }
    }
    size_t unfixed = component_flows.size();
    while (unfixed > 0) {
      // The level at which the next link saturates, or a transfer reaches its bound; an unfixed transfer's
      // share is level / its penalty.
      double level = std::numeric_limits<double>::infinity();
      for (const auto& [l, r] : room)
        if (r.second > 0.0) level = std::min(level, r.first / r.second);
      for (const int fl : component_flows) {
        const Flow& f = flows_[static_cast<size_t>(fl)];
        if (!f.fixed) level = std::min(level, f.bound * f.penalty);
      }
      // Every transfer held at this level: on a link that saturates at it (all such links at once, which
      // keeps the rounds few), or at its own bound.
      const double at_level = level * (1 + 1e-12);
      std::vector<int> fixing;
      for (const auto& [l, r] : room)
        if (r.second > 0.0 && r.first / r.second <= at_level) {
          for (const int fl : links_[static_cast<size_t>(l)].moving)
            if (!flows_[static_cast<size_t>(fl)].fixed) fixing.push_back(fl);
          room[l].second = 0.0;
        }
      for (const int fl : component_flows) {
        const Flow& f = flows_[static_cast<size_t>(fl)];
        if (!f.fixed && f.bound * f.penalty <= at_level) fixing.push_back(fl);
      }
      if (fixing.empty())  // rounding closed every link they share: whatever is left takes the level
        for (const int fl : component_flows)
          if (!flows_[static_cast<size_t>(fl)].fixed) fixing.push_back(fl);
      std::sort(fixing.begin(), fixing.end());
      fixing.erase(std::unique(fixing.begin(), fixing.end()), fixing.end());
      for (const int fl : fixing) {
        Flow& f = flows_[static_cast<size_t>(fl)];
        f.fixed = true;
        const double share = level / f.penalty;
        f.rate = share * f.factor;
        --unfixed;
        for (const int l : f.links) {
          auto& r = room[l];
          r.first = std::max(0.0, r.first - share);
          r.second -= 1.0 / f.penalty;
          if (r.second < 1e-9 / f.penalty) r.second = 0.0;  // no unfixed flow left on it (rounding aside)
        }
      }
    }
    for (const int fl : component_flows) {
      Flow& f = flows_[static_cast<size_t>(fl)];
      f.fixed = false;
      schedule(fl, now + f.remaining / f.rate);
    }
  }

  RouteOf route_of_;
  LatencyOf least_latency_;
  double fraction_;
  double tcp_gamma_;
  std::vector<Flow> flows_;
  std::vector<double> receive_wait_;  // by transfer id: the protocol's wait beyond the route, the receiver's
  std::vector<Link> links_;
  std::unordered_map<sg4::Link*, int> link_ids_;
  mutable std::priority_queue<Event, std::vector<Event>, Later> events_;
};

}  // namespace

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
  if (options_.protocol == Protocol::Auto) {
    // NCCL's choice: the protocol whose predicted time is least for this size (the first on a tie).
    bool first = true;
    for (const Protocol candidate : auto_protocol_candidates(any_pcie_hop_)) {
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
  return cache_.emplace(bytes, std::move(p)).first->second;
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
    FluidReplay network([this](int from, int to) -> const CachedRoute& { return cached_route(from, to); },
                        [&](int from, int to) { return costs.hop(hop_class(from, to)); }, costs.bandwidth_fraction,
                        tcp_gamma_);
    replayed_end = replay_plan(plan, ranks(), network, p.protocol != Protocol::None);
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
    // Aggregated: the flows carry the wire bytes at the route's latency; the residual sleep adds the rest.
    // A rank's pattern flows run side by side, each at the measured share.
    const double flows = any_flow ? links_[ph].alpha + static_cast<double>(wire_bytes(busiest, costs.bandwidth_fraction)) /
                                                             (links_[ph].bandwidth * fanout_[ph])
                                  : 0.0;
    p.phase_seconds.push_back(seconds);
    p.residual.push_back(std::max(0.0, seconds - flows));
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
      const auto measured = pattern_rates_[ph].find((static_cast<uint64_t>(from) << 32) | static_cast<uint32_t>(to));
      const double rate = measured != pattern_rates_[ph].end()
                              ? measured->second
                              : level_links_[ph][node_of_[from] == node_of_[to] ? 0 : 1].bandwidth;
      const double route = cached_route(from, to).latency;
      const double moving = chunk / (rate * costs.bandwidth_fraction);
      hops[static_cast<size_t>(pos)] = {route + moving, std::max(route, costs.hop(hop_class(from, to))) + moving};
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

std::vector<sg4::Mailbox*> PlannedCollective::incoming_mailboxes(int rank, const Prepared& p) {
  std::vector<sg4::Mailbox*> boxes;
  for (size_t ph = 0; ph < p.plan.phases.size(); ++ph) {
    const Seat seat = seats_[ph][rank];
    if (seat.group < 0) continue;
    const Group& group = p.plan.phases[ph].groups[seat.group];
    const Schedule& schedule = *group.schedule;
    if (!buffered(schedule, p.protocol != Protocol::None)) continue;
    for (int lane = 0; lane < schedule.lanes(); ++lane) {
      const int lane_group = schedule.lanes() > 1 ? schedule.lane_group(lane) : 0;
      for (int i = 0; i < schedule.num_steps(seat.pos); ++i) {
        const Step s = schedule.lane_step(seat.pos, i, lane);
        if (s.recv.active()) boxes.push_back(mailbox(rank, group.members[s.recv.peer], lane_group));
      }
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
      std::list<sg4::CommPtr>::iterator tracked;
      // With a protocol, the receiver has the data the protocol's hop wait after SimGrid delivers it:
      // max(route, hop latency) + wire bytes / bandwidth in all; the sender too, unless the schedule is
      // buffered (then it is free once it is delivered).
      double done = 0.0;
      if (s.send.active()) {
        const int to = group.members[s.send.peer];
        send = mailbox(to, rank)->put_async(
            &transfer_token, modelled ? wire_bytes(s.send.bytes, p.costs.bandwidth_fraction) : s.send.bytes);
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
    const auto add = [&](const sg4::CommPtr& c, double extra) {
      flying.push_back({c, g, extra, in_flight_.insert(in_flight_.end(), c)});
      comms.push_back(c);
      ++grp.pending;
    };
    for (const int lane : grp.lanes) {
      const Step s = schedule.lane_step(pos, grp.step, lane);
      if (s.send.active()) {
        const int to = group.members[s.send.peer];
        add(mailbox(to, rank, g)->put_async(
                &transfer_token, modelled ? wire_bytes(s.send.bytes, p.costs.bandwidth_fraction) : s.send.bytes),
            modelled && !eager ? hop_extra(rank, to, p.costs) : 0.0);
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

void PlannedCollective::run_analytic(int rank, const Prepared& p) {
  barrier().wait();
  if (rank == 0) bytes_sent_ += p.total_bytes;  // the bytes the algorithm would move
  if (p.total_seconds > 0.0) sg4::this_actor::sleep_for(p.total_seconds);
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

sg4::Barrier& PlannedCollective::barrier() {
  if (!barrier_) barrier_ = sg4::Barrier::create(static_cast<unsigned>(ranks()));
  return *barrier_;
}

std::string PlannedCollective::describe() const {
  std::string line = std::string(to_string(algorithm_)) + " " + to_string(kind_) + " over " +
                     std::to_string(ranks()) + " ranks, " + to_string(fidelity_);
  if (requested_ == Fidelity::Auto)
    line += " (auto: " + std::to_string(auto_stepwise_flows_) + " stepwise flows per call)";
  if (options_.protocol != Protocol::None)
    line += std::string(", protocol ") + to_string(options_.protocol) +
            (options_.protocol == Protocol::Auto ? " (NCCL's choice per size)" : "");
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
