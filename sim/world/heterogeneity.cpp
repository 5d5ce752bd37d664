#include "sim/world/heterogeneity.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <simgrid/kernel/ProfileBuilder.hpp>
#include <simgrid/kernel/Timer.hpp>
#include <string>

#include "sim/scenario/errors.hpp"
#include "sim/scenario/units.hpp"

namespace dtsim::sim {

using simgrid::kernel::timer::Timer;

struct HeterogeneityRuntime::State : std::enable_shared_from_this<State> {
  sg4::Engine* engine = nullptr;
  StragglerModel stragglers;
  FaultSchedule faults;
  std::vector<sg4::Host*> worker_hosts;
  std::vector<std::vector<sg4::Link*>> worker_links;  // the directions of each worker's link
  std::vector<std::function<void(const FaultTransition&)>> listeners;
  std::set<std::pair<int, std::string>> restartable;  // (worker, actor name) marked auto-restart
  std::vector<bool> awaiting_restart;  // per worker: a restartable actor died with its host and waits for it
  bool waiting_for_a_worker = false;    // a strategy waits for any failed worker to return

  std::map<uint64_t, Timer*> pending;  // timers not fired yet, by id
  uint64_t next_timer_id = 0;
  bool finished = false;  // no actor left: nothing more may be scheduled
  bool watching_actors = false;

  // Runs `action` at simulated time `date` in kernel context.
  void at(double date, std::function<void()> action) {
    if (finished) return;
    watch_actors();
    const uint64_t id = next_timer_id++;
    pending[id] = Timer::set(date, [self = shared_from_this(), id, action = std::move(action)] {
      self->pending.erase(id);  // the kernel deletes a timer once it has fired
      if (!self->finished) action();
    });
  }

  // Cancels the pending timers once the simulation has nothing left to do, so that they do not drag the
  // clock (and the run's simulated time) on to their dates.
  void watch_actors() {
    if (watching_actors) return;
    watching_actors = true;
    sg4::Actor::on_termination_cb([self = shared_from_this()](sg4::Actor const& ending) {
      self->note_restartable_end(ending);
      if (self->finished || self->anyone_left(ending)) return;
      for (auto& [id, timer] : self->pending) timer->remove();
      self->pending.clear();
      self->finished = true;
    });
  }

  // SimGrid restarts an auto-restart actor only if its host's failure killed it; one that finished with its
  // host up is gone for good. (A restarted actor is a new actor with the same name and host.)
  void note_restartable_end(const sg4::Actor& ending) {
    const int w = worker_of(ending.get_host());
    const std::pair<int, std::string> key{w, ending.get_name()};
    if (w < 0 || !restartable.count(key)) return;
    if (ending.get_host()->is_on())
      restartable.erase(key);
    else
      awaiting_restart[static_cast<size_t>(w)] = true;
  }

  bool anyone_left(const sg4::Actor& ending) const {
    for (const sg4::ActorPtr& a : engine->get_all_actors())
      if (a.get() != &ending && !a->is_daemon()) return true;
    const double now = sg4::Engine::get_clock();
    for (size_t w = 0; w < awaiting_restart.size(); ++w)
      if ((awaiting_restart[w] || waiting_for_a_worker) && !worker_hosts[w]->is_on() &&
          faults.worker_up_at(static_cast<int>(w), now) < kNever)
        return true;
    return false;
  }

  int worker_of(const sg4::Host* host) const {
    for (size_t w = 0; w < worker_hosts.size(); ++w)
      if (worker_hosts[w] == host) return static_cast<int>(w);
    return -1;
  }

  void switch_resource(const FaultTransition& t) {
    if (t.link) {
      for (sg4::Link* l : worker_links[static_cast<size_t>(t.worker)]) t.down ? l->turn_off() : l->turn_on();
    } else {
      sg4::Host* h = worker_hosts[static_cast<size_t>(t.worker)];
      if (!t.down) awaiting_restart[static_cast<size_t>(t.worker)] = false;  // turn_on restarts them now
      t.down ? h->turn_off() : h->turn_on();
    }
    for (const auto& listener : listeners) listener(t);
  }
};

namespace {

// A constant speed profile: SimGrid multiplies the host's peak by this fraction from time 0 on.
void slow_down_host(sg4::Host* host, double factor) {
  char text[64];
  std::snprintf(text, sizeof text, "0 %.17g\n", factor);
  host->set_speed_profile(
      simgrid::kernel::profile::ProfileBuilder::from_string("dtsim-speed-" + host->get_name(), text, -1));
}

// Plays a bandwidth profile on `links`: each point sets fraction × nominal at its date. The points are
// chained (each timer schedules the next as it fires), so a profile, periodic or not, has one pending timer.
void play_link_profile(const std::shared_ptr<HeterogeneityRuntime::State>& state, const LinkProfile& profile,
                       const std::vector<sg4::Link*>& links) {
  std::vector<double> nominal;
  for (sg4::Link* l : links) nominal.push_back(l->get_bandwidth());
  auto set_level = [links, nominal](double fraction) {
    for (size_t i = 0; i < links.size(); ++i) links[i]->set_bandwidth(fraction * nominal[i]);
  };
  // Point i of cycle k happens at k·period + time_i.
  struct Player {
    std::weak_ptr<HeterogeneityRuntime::State> state;
    LinkProfile profile;
    std::function<void(double)> set_level;
    void schedule(int64_t cycle, size_t point) const {
      const auto s = state.lock();
      if (!s) return;
      const double date = static_cast<double>(cycle) * profile.period + profile.points[point].time;
      const double fraction = profile.points[point].fraction;
      auto self = *this;
      s->at(date, [self, cycle, point, fraction] {
        self.set_level(fraction);
        if (point + 1 < self.profile.points.size())
          self.schedule(cycle, point + 1);
        else if (self.repeats())
          self.schedule(cycle + 1, 0);
      });
    }
    // A single level set again every period would change nothing.
    bool repeats() const { return profile.period > 0 && profile.points.size() > 1; }
  };
  const Player player{state, profile, set_level};
  if (profile.points.front().time > 0.0) {
    player.schedule(0, 0);
    return;
  }
  // A point at time 0 applies before anything starts.
  set_level(profile.points.front().fraction);
  if (profile.points.size() > 1) player.schedule(0, 1);
}

int chunk_token = 0;  // background transfers carry no data; SimGrid refuses null payloads

// Far more bytes than any flow can move in a run: the flow is cut at its end time, not by its size.
constexpr uint64_t kEndlessBytes = uint64_t{1} << 62;

void start_flow(const BackgroundFlow& flow, size_t id, sg4::Host* from, sg4::Host* to) {
  // A flow whose end host is down when it should start never starts (SimGrid cannot place actors there).
  if (!from->is_on() || !to->is_on()) return;
  sg4::Mailbox* mailbox = sg4::Mailbox::by_name("dtsim/background/" + std::to_string(id));
  const std::string name = "background-flow-" + std::to_string(id);
  // Daemons: background traffic ends with the training job, and never keeps the simulation alive.
  sg4::Actor::create(name + "-send", from, [mailbox, flow] {
    sg4::Actor::self()->daemonize();
    sg4::CommPtr comm = mailbox->put_init(&chunk_token, kEndlessBytes);
    if (flow.rate > 0) comm->set_rate(flow.rate);
    comm->start();
    try {
      if (flow.end < kNever)
        comm->wait_until(flow.end);
      else
        comm->wait();
    } catch (const simgrid::TimeoutException&) {
      comm->cancel();
    } catch (const simgrid::Exception&) {
      // A failure on the route or at the other end stops the flow; it does not restart.
    }
  });
  sg4::Actor::create(name + "-receive", to, [mailbox] {
    sg4::Actor::self()->daemonize();
    try {
      mailbox->get<int>();
    } catch (const simgrid::Exception&) {
      // Cut at its end time, or by a failure.
    }
  });
}

}  // namespace

std::vector<sg4::Link*> link_directions(sg4::Link* link) {
  if (const auto* duplex = dynamic_cast<sg4::SplitDuplexLink*>(link))
    return {duplex->get_link_up(), duplex->get_link_down()};
  return {link};
}

const StragglerModel& HeterogeneityRuntime::stragglers() const { return state_->stragglers; }
const FaultSchedule& HeterogeneityRuntime::faults() const { return state_->faults; }

void HeterogeneityRuntime::on_fault(std::function<void(const FaultTransition&)> listener) {
  state_->listeners.push_back(std::move(listener));
}

void HeterogeneityRuntime::restart_when_host_returns(const sg4::ActorPtr& actor) {
  actor->set_auto_restart(true);
  const int w = state_->worker_of(actor->get_host());
  if (w >= 0) state_->restartable.insert({w, actor->get_name()});
}

void HeterogeneityRuntime::wait_for_a_worker(bool waiting) { state_->waiting_for_a_worker = waiting; }

HeterogeneityRuntime apply_heterogeneity(sg4::Engine& engine, const Platform& platform, const RunConfig& config) {
  const HeterogeneityConfig& h = config.heterogeneity;
  HeterogeneityRuntime runtime;
  runtime.state_ = std::make_shared<HeterogeneityRuntime::State>();
  HeterogeneityRuntime::State& s = *runtime.state_;
  s.engine = &engine;
  s.stragglers = StragglerModel(h.stragglers, config.heterogeneity_seed());
  try {
    s.faults = FaultSchedule(h.faults, platform.node_of_worker);
  } catch (const ValueError& e) {
    throw InputError(config.scenario_path, "faults.events", e.what(), e.hint());
  }
  s.worker_hosts = platform.workers;
  s.awaiting_restart.assign(platform.workers.size(), false);
  for (sg4::Link* l : platform.worker_links) s.worker_links.push_back(link_directions(l));

  for (const SlowWorker& slow : h.stragglers.slow_workers)
    slow_down_host(platform.workers.at(static_cast<size_t>(slow.worker)), slow.speed_factor);

  for (const LinkProfile& profile : h.background.link_profiles) {
    std::vector<sg4::Link*> links;
    for (int w = 0; w < platform.num_workers(); ++w) {
      const bool targeted = profile.workers.empty() ||
                            std::find(profile.workers.begin(), profile.workers.end(), w) != profile.workers.end();
      if (targeted)
        links.insert(links.end(), s.worker_links[static_cast<size_t>(w)].begin(),
                     s.worker_links[static_cast<size_t>(w)].end());
    }
    play_link_profile(runtime.state_, profile, links);
  }

  for (size_t i = 0; i < h.background.flows.size(); ++i) {
    const BackgroundFlow& f = h.background.flows[i];
    sg4::Host* from = platform.workers.at(static_cast<size_t>(f.from));
    sg4::Host* to = platform.workers.at(static_cast<size_t>(f.to));
    if (f.start > 0.0)
      s.at(f.start, [f, i, from, to] { start_flow(f, i, from, to); });
    else
      start_flow(f, i, from, to);
  }

  // Even a failure at time 0 goes through a timer: actors cannot be created on a host that is already off,
  // so the strategy's actors start and are then killed at time 0, as on a real cluster.
  for (const FaultTransition& t : s.faults.transitions())
    s.at(t.time, [state = runtime.state_.get(), t] { state->switch_resource(t); });
  return runtime;
}

}  // namespace dtsim::sim
