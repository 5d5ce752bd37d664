#include "sim/strategies/timing/ps_timing.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <stdexcept>

#include "sim/collectives/parameter_server.hpp"
#include "sim/strategies/ps/ps_messages.hpp"
#include "sim/strategies/metrics.hpp"
#include "sim/strategies/ps/ps_partition.hpp"

namespace dtsim::sim {
namespace sg4 = simgrid::s4u;

namespace {

// The job's state shared by the actors of one run: tickets, messages, versions, what was measured.
class PsTimingRun {
 public:
  PsTimingRun(const Platform& platform, const PsTimingSpec& spec)
      : platform_(platform),
        spec_(spec),
        workers_(platform.num_workers()),
        shards_(static_cast<int>(spec.push_bytes.size())),
        channel_(platform, shards_, "ps-timing"),
        tickets_left_(static_cast<int64_t>(spec.steps) * workers_),
        out_(workers_),
        time_(static_cast<size_t>(workers_)),
        shard_state_(static_cast<size_t>(shards_)) {
    if (shards_ < 1 || spec.pull_bytes.size() != spec.push_bytes.size() ||
        platform.servers.size() < static_cast<size_t>(shards_))
      throw std::logic_error("ps timing: a shard needs its push and pull sizes and a server host");
    for (ShardState& s : shard_state_) {
      s.pulled_version.assign(static_cast<size_t>(workers_), 0);
      s.said_goodbye.assign(static_cast<size_t>(workers_), false);
      s.outstanding.assign(static_cast<size_t>(workers_), false);
      s.reply.resize(static_cast<size_t>(workers_));
    }
  }

  void spawn() {
    wall_start_ = std::chrono::steady_clock::now();
    for (int s = 0; s < shards_; ++s)
      sg4::Actor::create("ps-shard" + std::to_string(s), platform_.servers[static_cast<size_t>(s)], [this, s] { serve(s); });
    for (int w = 0; w < workers_; ++w)
      sg4::Actor::create("worker" + std::to_string(w), platform_.workers[static_cast<size_t>(w)], [this, w] { work(w); });
  }

  PsTimingOutcome finish() {
    out_.end_s = sg4::Engine::get_clock();
    out_.timing.bytes_sent = channel_.bytes_sent();
    for (const WorkerTime& t : time_) {
      out_.timing.compute_s += t.compute;
      out_.timing.exposed_s += t.communication;
    }
    const double per = static_cast<double>(workers_) * spec_.steps;
    out_.timing.compute_s /= per;
    out_.timing.exposed_s /= per;
    out_.updates = shard_state_[0].version;
    return std::move(out_);
  }

 private:
  struct Waiting {  // a gradient in the n-softsync buffer
    int worker;
    int64_t pulled_version;
  };
  struct HeldPull {
    int worker;
    double since;
  };
  struct ShardState {
    int64_t version = 0;
    std::vector<Waiting> collected;
    std::deque<HeldPull> held;              // pulls waiting for the staleness bound, in arrival order
    std::vector<bool> outstanding;          // per worker: served a pull whose gradient has not come back
    std::vector<int64_t> pulled_version;    // per worker: the version its last pull was served at
    std::vector<bool> said_goodbye;
    std::vector<sg4::CommPtr> reply;        // per worker: the last reply sent
    int64_t gradients = 0;
  };

  bool take_ticket() {
    if (tickets_left_ == 0) return false;
    --tickets_left_;
    return true;
  }

  ShardPayload request(int worker, bool gradient, ShardRequest::Next next, uint64_t bytes) {
    auto r = std::make_unique<ShardRequest>();
    r->worker = worker;
    r->has_gradient = gradient;
    r->next = next;
    return requests_.send(worker, std::move(r), bytes);
  }

  // pull → compute → push (carrying the next pull), as async-ps's worker does: from every shard at once, or
  // under a staleness bound shard by shard (the push carries the next pull to shard 0 only).
  void work(int w) {
    WorkerTime& me = time_[static_cast<size_t>(w)];
    const auto timed = [&](double& into, auto&& what) {
      const double start = sg4::Engine::get_clock();
      what();
      into += sg4::Engine::get_clock() - start;
    };
    const bool first = take_ticket();
    if (!first) {  // nothing left to compute: the shards need only know
      timed(me.communication, [&] {
        for (int s = 0; s < shards_; ++s)
          channel_.push_to(w, s, request(w, false, ShardRequest::Next::Goodbye, kControlMessageBytes));
      });
      return;
    }
    timed(me.communication, [&] { fetch(w, false); });
    for (int64_t computed = 0;; ++computed) {
      const double multiplier = spec_.stragglers ? spec_.stragglers->compute_multiplier(w, computed) : 1.0;
      timed(me.compute, [&] { sg4::this_actor::execute(spec_.gradient_flops * multiplier); });
      const bool more = take_ticket();
      timed(me.communication, [&] {
        std::vector<ShardPayload> pushes;
        for (int s = 0; s < shards_; ++s) {
          const ShardRequest::Next next = !more                       ? ShardRequest::Next::Goodbye
                                          : spec_.staleness_bound >= 0 && s != 0 ? ShardRequest::Next::Nothing
                                                                      : ShardRequest::Next::Params;
          pushes.push_back(request(w, true, next, spec_.push_bytes[static_cast<size_t>(s)]));
        }
        channel_.push(w, pushes);
      });
      if (!more) return;
      timed(me.communication, [&] { fetch(w, true); });
    }
  }

  // The weights for the next computation; with `first_requested`, shard 0 has the request already (it
  // travelled with the last push).
  void fetch(int w, bool first_requested) {
    const auto ask = [&] { return request(w, false, ShardRequest::Next::Params, kControlMessageBytes); };
    if (spec_.staleness_bound < 0) {
      if (!first_requested) {
        std::vector<ShardPayload> asks;
        for (int s = 0; s < shards_; ++s) asks.push_back(ask());
        channel_.push(w, asks);
      }
      for (const ShardPayload& p : channel_.pull(w)) replies_.take(p);
      return;
    }
    for (int s = 0; s < shards_; ++s) {
      if (!(first_requested && s == 0)) channel_.push_to(w, s, ask());
      replies_.take(channel_.pull_from(w, s));
    }
  }

  void serve(int s) {
    ShardState& me = shard_state_[static_cast<size_t>(s)];
    const auto finished = [&] {
      for (const bool g : me.said_goodbye)
        if (!g) return false;
      return true;
    };
    while (!finished())
      // One message at a time: the pull a push carries is served (or held) before the next is looked at.
      for (const PushArrival& a : channel_.receive_pushes_until(s, ShardedServerChannel::kNoDeadline)) {
        const std::unique_ptr<ShardRequest> r = requests_.take(a.payload);
        const auto w = static_cast<size_t>(r->worker);
        if (r->has_gradient) accept(s, me, r->worker);
        if (r->next == ShardRequest::Next::Params)
          me.held.push_back({r->worker, sg4::Engine::get_clock()});
        else if (r->next == ShardRequest::Next::Goodbye)
          me.said_goodbye[w] = true;
        serve_held(s, me);
      }
    if (!me.collected.empty()) apply(s, me);  // what is left when the gradients run out: a smaller average
    channel_.stop_serving(s);
  }

  // Under a bound s, a pull waits while the oldest outstanding computation's staleness plus the number
  // outstanding would exceed s (async-ps's rule, ps_shard.hpp).
  bool may_serve(const ShardState& me) const {
    if (spec_.staleness_bound < 0) return true;
    int64_t outstanding = 0, oldest = 0;
    for (size_t w = 0; w < me.outstanding.size(); ++w)
      if (me.outstanding[w]) {
        ++outstanding;
        oldest = std::max(oldest, me.version - me.pulled_version[w]);
      }
    return outstanding == 0 || oldest + outstanding <= spec_.staleness_bound;
  }

  void serve_held(int s, ShardState& me) {
    while (!me.held.empty() && may_serve(me)) {
      const HeldPull pull = me.held.front();
      me.held.pop_front();
      const auto w = static_cast<size_t>(pull.worker);
      const double waited = sg4::Engine::get_clock() - pull.since;
      if (waited > 0) out_.staleness.held(pull.worker, waited);
      auto reply = std::make_unique<ShardReply>();
      reply->version = me.version;
      // Kept until the next reply to the same worker: a reply completes on its own while the shard serves.
      me.reply[w] = channel_.send_pull(
          s, pull.worker, replies_.send(pull.worker, std::move(reply), spec_.pull_bytes[static_cast<size_t>(s)]));
      me.pulled_version[w] = me.version;
      me.outstanding[w] = true;
    }
  }

  void accept(int s, ShardState& me, int worker) {
    me.outstanding[static_cast<size_t>(worker)] = false;
    me.collected.push_back({worker, me.pulled_version[static_cast<size_t>(worker)]});
    if (static_cast<int>(me.collected.size()) == spec_.gradients_per_update) apply(s, me);
  }

  // Each gradient's staleness is counted when the update it joins is applied, as async-ps's shards count it.
  void apply(int s, ShardState& me) {
    for (const Waiting& c : me.collected) out_.staleness.applied(c.worker, s, me.version - c.pulled_version, 1.0);
    me.gradients += static_cast<int64_t>(me.collected.size());
    ++me.version;
    me.collected.clear();
    if (s == 0)  // shard 0 is the step clock: a step is a global batch's worth of gradients
      while (me.gradients >= static_cast<int64_t>(out_.timing.step_end_s.size() + 1) * workers_) {
        out_.timing.step_end_s.push_back(sg4::Engine::get_clock());
        out_.timing.step_wall_s.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count());
      }
  }

  const Platform& platform_;
  PsTimingSpec spec_;
  int workers_, shards_;
  ShardedServerChannel channel_;
  int64_t tickets_left_;
  MessageStore<ShardRequest> requests_;
  MessageStore<ShardReply> replies_;
  PsTimingOutcome out_;
  std::vector<WorkerTime> time_;
  std::vector<ShardState> shard_state_;
  std::chrono::steady_clock::time_point wall_start_;
};

}  // namespace

PsTimingOutcome run_ps_timing(const Platform& platform, const PsTimingSpec& spec) {
  PsTimingRun run(platform, spec);
  run.spawn();
  sg4::Engine::get_instance()->run();
  return run.finish();
}

}  // namespace dtsim::sim
