#include "sim/collectives/fluid_replay.hpp"

#include <algorithm>
#include <limits>
#include <queue>
#include <unordered_map>

#include "sim/collectives/protocol.hpp"

namespace dtsim::sim {
namespace sg4 = simgrid::s4u;

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
  FluidReplay(ReplayRouteOf route_of, ReceiveWaitOf receive_wait_of, double bandwidth_fraction, double tcp_gamma)
      : route_of_(std::move(route_of)), receive_wait_of_(std::move(receive_wait_of)), fraction_(bandwidth_fraction),
        tcp_gamma_(tcp_gamma) {}

  void start(const std::vector<ReplayTransfer>& batch, const std::vector<size_t>& ids, double now) override {
    for (size_t i = 0; i < batch.size(); ++i) {
      const ReplayRoute& r = route_of_(batch[i].from, batch[i].to);
      Flow f;
      f.id = ids[i];
      f.factor = r.factor;
      f.penalty = std::max(r.latency, 1e-12);
      if (r.latency > 0.0) f.bound = tcp_gamma_ / (2 * r.latency);  // SimGrid's TCP window cap
      f.remaining = static_cast<double>(wire_bytes(batch[i].bytes, fraction_));
      if (receive_wait_.size() <= ids[i]) receive_wait_.resize(ids[i] + 1, 0.0);
      receive_wait_[ids[i]] = receive_wait_of_(batch[i].from, batch[i].to);
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
          finish_moving(e.flow, done);
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
        finish_moving(e.flow, done);
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
  void finish_moving(int flow, std::vector<size_t>& done) {
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

  ReplayRouteOf route_of_;
  ReceiveWaitOf receive_wait_of_;
  double fraction_;
  double tcp_gamma_;
  std::vector<Flow> flows_;
  std::vector<double> receive_wait_;  // by transfer id: the protocol's wait beyond the route, the receiver's
  std::vector<Link> links_;
  std::unordered_map<sg4::Link*, int> link_ids_;
  mutable std::priority_queue<Event, std::vector<Event>, Later> events_;
};

}  // namespace

std::unique_ptr<ReplayNetwork> make_fluid_replay(ReplayRouteOf route_of, ReceiveWaitOf receive_wait,
                                                 double bandwidth_fraction, double tcp_gamma) {
  return std::make_unique<FluidReplay>(std::move(route_of), std::move(receive_wait), bandwidth_fraction, tcp_gamma);
}

}  // namespace dtsim::sim
