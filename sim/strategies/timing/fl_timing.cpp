#include "sim/strategies/timing/fl_timing.hpp"

#include <simgrid/Exception.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/strategies/federated/local_step_wait.hpp"
#include "sim/world/link_traffic.hpp"

namespace dtsim::sim {
namespace sg4 = simgrid::s4u;
namespace {

double now() { return sg4::Engine::get_clock(); }

void count_link_traffic(const sg4::CommPtr& c, const sg4::Host* from, const sg4::Host* to, uint64_t bytes) {
  if (LinkTraffic* traffic = LinkTraffic::active()) traffic->record(c, from, to, bytes, static_cast<double>(bytes));
}

// SimGrid wakes a timed wait at start + (target − start), which can miss the target by an ulp: within this of
// the deadline counts as having reached it (as federated learning's server counts it).
bool reached(double now, double t) { return now >= t - 1e-9 * std::max(1.0, std::fabs(t)); }

// One selected client's round, written by its actor and read by the server.
struct Client {
  ClientAssignment work;
  double lost_at = kNever;  // its availability window closes
  bool reports = true;
  bool reported = false, kept = false, stopped = false, late = false, lost = false;
  int64_t steps_done = 0;
  double report_time = 0;
  sg4::ActorPtr actor;
  sg4::ActivityPtr current;  // what the client waits on: cancelled when the round no longer needs it
};

class FlTimingRun {
 public:
  FlTimingRun(const Platform& platform, const FlTimingSpec& spec, const RoundPlanner& planner)
      : platform_(platform), spec_(spec), planner_(planner), steps_started_(platform.workers.size(), 0) {
    if (platform.servers.empty()) throw std::logic_error("fl timing: the server needs a host");
  }

  void spawn() {
    wall_start_ = std::chrono::steady_clock::now();
    sg4::Actor::create("fl-server", platform_.servers.front(), [this] {
      mutex_ = sg4::Mutex::create();
      reported_ = sg4::ConditionVariable::create();
      for (int64_t round = 0; round < spec_.rounds; ++round) play(round);
    });
  }

  FlTimingOutcome finish() {
    if (selections_ > 0) {
      out_.timing.compute_s /= static_cast<double>(selections_);
      out_.timing.exposed_s /= static_cast<double>(selections_);
    }
    return out_;
  }

 private:
  void play(int64_t round) {
    const double t0 = now();
    const RoundPlan plan = planner_.plan(round, t0);
    if (plan.selected.empty()) {
      // Nobody online: the round passes without an update (a later round draws availability again).
      ++out_.empty_rounds;
      const double next = planner_.next_availability_change(now());
      if (std::isfinite(next)) sg4::this_actor::sleep_until(next);
      end_round();
      return;
    }
    std::vector<std::unique_ptr<Client>> clients;
    for (const ClientAssignment& a : plan.selected) {
      auto c = std::make_unique<Client>();
      c->work = a;
      c->reports = a.local_steps > 0 && !(a.straggler && spec_.drop_policy);
      c->lost_at = planner_.lost_at(a.client, t0);
      clients.push_back(std::move(c));
    }
    const int n = static_cast<int>(clients.size());
    selections_ += n;
    for (auto& c : clients) {
      Client* me = c.get();
      c->actor = sg4::Actor::create("client" + std::to_string(me->work.client),
                                    platform_.workers[static_cast<size_t>(me->work.client)],
                                    [this, me, t0, n] { client(*me, t0, n); });
    }
    collect(clients, plan.keep, t0);
    for (auto& c : clients) c->actor->join();
    std::vector<Client*> kept;
    for (const auto& c : clients) {
      if (c->kept) {
        kept.push_back(c.get());
        out_.local_steps_kept += c->steps_done;
      } else {
        ++(!c->reports ? out_.dropped_stragglers
           : c->lost   ? out_.lost
           : c->late   ? out_.dropped_deadline
                       : out_.dropped_overcommit);
      }
    }
    out_.reports_kept += static_cast<int64_t>(kept.size());
    if (spec_.secure_aggregation && !kept.empty()) unmask(kept, n);
    if (!kept.empty()) sg4::this_actor::execute(spec_.aggregation_flops * static_cast<double>(kept.size()));
    end_round();
  }

  // Secure aggregation's last exchange: the server names the survivors to each, each answers with its
  // shares; then the server reconstructs and removes the masks.
  void unmask(const std::vector<Client*>& survivors, int instance_size) {
    const SecureAggregationCost& cost = *spec_.secure_aggregation;
    const int s = static_cast<int>(survivors.size());
    const SecureAggregationBytes b = cost.bytes(instance_size, s, spec_.wire_values, spec_.vectors);
    sg4::Host* server = platform_.servers.front();
    for (const bool up : {false, true}) {
      std::vector<std::pair<sg4::CommPtr, sg4::Host*>> comms;  // and each one's client
      for (const Client* c : survivors) {
        sg4::Host* host = platform_.workers[static_cast<size_t>(c->work.client)];
        comms.emplace_back(up ? sg4::Comm::sendto_async(host, server, b.unmask_up)
                              : sg4::Comm::sendto_async(server, host, b.survivors_down),
                           host);
      }
      const uint64_t bytes = up ? b.unmask_up : b.survivors_down;
      for (const auto& [c, host] : comms) {
        c->wait();
        out_.timing.bytes_sent += bytes;
        count_link_traffic(c, up ? host : server, up ? server : host, bytes);
      }
    }
    const double seconds = cost.server_seconds(instance_size, s, spec_.wire_values, spec_.vectors);
    sg4::this_actor::execute(seconds * server->get_speed());
  }


  void end_round() {
    out_.timing.step_end_s.push_back(now());
    out_.timing.step_wall_s.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count());
  }

  // The first K reports in arrival order (ties by client id) are kept; then whoever still works is stopped.
  // Under the drop policy the deadline closes the round on whoever has not reported; a client whose
  // availability window closes is lost at that moment.
  void collect(std::vector<std::unique_ptr<Client>>& clients, int keep, double round_start) {
    const bool hard_deadline = spec_.deadline_s > 0 && spec_.drop_policy;
    const double deadline = round_start + spec_.deadline_s;
    int kept = 0;
    std::unique_lock<sg4::Mutex> lock(*mutex_);
    for (;;) {
      std::vector<Client*> arrived;
      for (auto& c : clients)
        if (c->reports && c->reported && !c->kept && !c->stopped) arrived.push_back(c.get());
      std::sort(arrived.begin(), arrived.end(), [](const Client* a, const Client* b) {
        return a->report_time != b->report_time ? a->report_time < b->report_time : a->work.client < b->work.client;
      });
      for (Client* c : arrived) {
        if (c->steps_done == 0) {
          c->stopped = c->late = true;  // partial policy: no step finished before the deadline
        } else if (kept < keep) {
          c->kept = true;
          ++kept;
        } else {
          c->stopped = true;  // too late: over-committed
        }
      }
      std::vector<Client*> waiting;
      for (auto& c : clients) {
        if (!c->reports || c->reported || c->stopped) continue;
        if (reached(now(), c->lost_at)) {
          c->lost = true;
          stop(*c);
        } else {
          waiting.push_back(c.get());
        }
      }
      if (waiting.empty() || kept >= keep) break;
      if (hard_deadline && reached(now(), deadline)) {
        for (Client* c : waiting) c->late = true;
        break;
      }
      double wake = hard_deadline ? deadline : kNever;
      for (const Client* c : waiting) wake = std::min(wake, c->lost_at);
      if (std::isfinite(wake))
        reported_->wait_until(lock, wake);
      else
        reported_->wait(lock);
    }
    for (auto& c : clients)
      if (!c->reported || !c->reports) stop(*c);
  }

  void stop(Client& c) {
    c.stopped = true;
    if (c.current && c.current->get_state() == sg4::Activity::State::STARTED) c.current->cancel();
  }

  // download → local steps → upload; returns at once when the server has stopped it. Under the partial
  // policy a deadline stops local training: the step in progress does not count, the rest is uploaded.
  void client(Client& me, double round_start, int instance_size) {
    sg4::Host* host = platform_.workers[static_cast<size_t>(me.work.client)];
    sg4::Host* server = platform_.servers.front();
    const SecureAggregationBytes setup =
        spec_.secure_aggregation ? spec_.secure_aggregation->bytes(instance_size, 0, spec_.wire_values, spec_.vectors)
                                 : SecureAggregationBytes{};
    const auto wait = [&](const sg4::ActivityPtr& a, double& into) {
      const double start = now();
      bool ok = true;
      me.current = a;
      try {
        a->wait();
      } catch (const simgrid::Exception&) {
        ok = false;  // cancelled by the server
      }
      me.current = nullptr;
      into += now() - start;
      return ok && !me.stopped;
    };
    double& comm = out_.timing.exposed_s;
    double& compute = out_.timing.compute_s;
    const uint64_t download = spec_.download_bytes + setup.setup_down;
    // Each transfer is counted once delivered, as federated learning counts it.
    const auto send = [&](sg4::Host* from, sg4::Host* to, uint64_t bytes) {
      if (bytes == 0) return true;
      const sg4::CommPtr c = sg4::Comm::sendto_async(from, to, bytes);
      if (!wait(c, comm)) return false;
      out_.timing.bytes_sent += bytes;
      count_link_traffic(c, from, to, bytes);
      return true;
    };
    if (!send(server, host, download)) return;
    if (spec_.secure_aggregation && !send(host, server, setup.setup_up)) return;  // secure aggregation's keys and shares
    if (!me.reports) return;  // a protocol straggler that will be dropped: it never finishes its work
    const double cutoff = spec_.deadline_s > 0 && !spec_.drop_policy ? round_start + spec_.deadline_s : kNever;
    for (int64_t k = 0; k < me.work.local_steps && now() < cutoff; ++k) {
      const double start = now();
      const int64_t step = steps_started_[static_cast<size_t>(me.work.client)]++;
      const double multiplier = spec_.stragglers ? spec_.stragglers->compute_multiplier(me.work.client, step) : 1.0;
      const sg4::ExecPtr exec = sg4::this_actor::exec_async(spec_.step_flops * multiplier);
      me.current = exec;
      const bool finished = wait_local_step(exec, cutoff);
      me.current = nullptr;
      compute += now() - start;
      if (me.stopped) return;
      if (!finished) break;
      ++me.steps_done;
    }
    if (me.steps_done > 0) {
      if (spec_.secure_aggregation) {  // the pairwise and self masks
        const double seconds = spec_.secure_aggregation->client_seconds(instance_size, spec_.wire_values, spec_.vectors);
        if (!wait(sg4::this_actor::exec_async(seconds * host->get_speed()), compute)) return;
      }
      if (!send(host, server, spec_.upload_bytes + setup.masked_extra)) return;
    }
    me.reported = true;
    me.report_time = now();
    reported_->notify_all();
  }

  const Platform& platform_;
  FlTimingSpec spec_;
  const RoundPlanner& planner_;
  FlTimingOutcome out_;
  std::vector<int64_t> steps_started_;  // per client, over the run: picks its straggler draws
  int64_t selections_ = 0;
  sg4::MutexPtr mutex_;
  sg4::ConditionVariablePtr reported_;
  std::chrono::steady_clock::time_point wall_start_;
};

}  // namespace

FlTimingOutcome run_fl_timing(const Platform& platform, const FlTimingSpec& spec, const RoundPlanner& planner) {
  FlTimingRun run(platform, spec, planner);
  run.spawn();
  sg4::Engine::get_instance()->run();
  return run.finish();
}

}  // namespace dtsim::sim
