#include "sim/strategies/timing/fl_timing.hpp"

#include <simgrid/Exception.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "sim/strategies/federated/local_step_wait.hpp"

namespace dtsim::sim {
namespace sg4 = simgrid::s4u;
namespace {

double now() { return sg4::Engine::get_clock(); }

// SimGrid wakes a timed wait at start + (target − start), which can miss the target by an ulp: within this of
// the deadline counts as having reached it (as federated learning's server counts it).
bool reached(double now, double t) { return now >= t - 1e-9 * std::max(1.0, std::fabs(t)); }

// One selected client's round, written by its actor and read by the server.
struct Client {
  ClientAssignment work;
  bool reports = true;
  bool reported = false, kept = false, stopped = false, late = false;
  int64_t steps_done = 0;
  double report_time = 0;
  sg4::ActorPtr actor;
  sg4::ActivityPtr current;  // what the client waits on: cancelled when the round no longer needs it
};

class FlTimingRun {
 public:
  FlTimingRun(const Platform& platform, const FlTimingSpec& spec, const RoundPlanner& planner)
      : platform_(platform), spec_(spec), planner_(planner) {
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
    const RoundPlan plan = planner_.plan(round, now());
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
      clients.push_back(std::move(c));
    }
    selections_ += static_cast<int64_t>(clients.size());
    const double start = now();
    for (auto& c : clients) {
      Client* me = c.get();
      c->actor = sg4::Actor::create("client" + std::to_string(me->work.client),
                                    platform_.workers[static_cast<size_t>(me->work.client)],
                                    [this, me, start] { client(*me, start); });
    }
    collect(clients, plan.keep, start);
    for (auto& c : clients) c->actor->join();
    int64_t kept = 0;
    for (const auto& c : clients) {
      if (c->kept) {
        ++kept;
        out_.local_steps_kept += c->steps_done;
      } else {
        ++(!c->reports ? out_.dropped_stragglers : c->late ? out_.dropped_deadline : out_.dropped_overcommit);
      }
    }
    out_.reports_kept += kept;
    if (kept > 0) sg4::this_actor::execute(spec_.aggregation_flops * static_cast<double>(kept));
    end_round();
  }


  void end_round() {
    out_.timing.step_end_s.push_back(now());
    out_.timing.step_wall_s.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count());
  }

  // The first K reports in arrival order (ties by client id) are kept; then whoever still works is stopped.
  // Under the drop policy the deadline closes the round on whoever has not reported.
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
      bool waiting = false;
      for (auto& c : clients) waiting = waiting || (c->reports && !c->reported && !c->stopped);
      if (!waiting || kept >= keep) break;
      if (hard_deadline && reached(now(), deadline)) {
        for (auto& c : clients)
          if (c->reports && !c->reported) c->late = true;
        break;
      }
      if (hard_deadline)
        reported_->wait_until(lock, deadline);
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
  void client(Client& me, double round_start) {
    sg4::Host* host = platform_.workers[static_cast<size_t>(me.work.client)];
    sg4::Host* server = platform_.servers.front();
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
    if (spec_.download_bytes > 0 && !wait(sg4::Comm::sendto_async(server, host, spec_.download_bytes), comm)) return;
    out_.timing.bytes_sent += spec_.download_bytes;  // counted once delivered, as federated learning counts it
    if (!me.reports) return;  // a protocol straggler that will be dropped: it never finishes its work
    const double cutoff = spec_.deadline_s > 0 && !spec_.drop_policy ? round_start + spec_.deadline_s : kNever;
    for (int64_t k = 0; k < me.work.local_steps && now() < cutoff; ++k) {
      const double start = now();
      const sg4::ExecPtr exec = sg4::this_actor::exec_async(spec_.step_flops);
      me.current = exec;
      const bool finished = wait_local_step(exec, cutoff);
      me.current = nullptr;
      compute += now() - start;
      if (me.stopped) return;
      if (!finished) break;
      ++me.steps_done;
    }
    if (me.steps_done > 0) {
      if (spec_.upload_bytes > 0 && !wait(sg4::Comm::sendto_async(host, server, spec_.upload_bytes), comm)) return;
      out_.timing.bytes_sent += spec_.upload_bytes;
    }
    me.reported = true;
    me.report_time = now();
    reported_->notify_all();
  }

  const Platform& platform_;
  FlTimingSpec spec_;
  const RoundPlanner& planner_;
  FlTimingOutcome out_;
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
