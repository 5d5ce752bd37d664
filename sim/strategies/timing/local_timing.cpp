#include "sim/strategies/timing/local_timing.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <vector>

#include "sim/collectives/collective.hpp"

namespace dtsim::sim {
namespace sg4 = simgrid::s4u;

LocalSgdTimingOutcome run_local_sgd_timing(const Platform& platform, const LocalSgdTimingSpec& spec,
                                           MakeCollective make) {
  if (spec.steps < 1 || spec.local_steps < 2)
    throw std::invalid_argument("local SGD timing: at least one step, and averages at most every 2 steps");
  if (spec.sync_until_step > 0 && !spec.sync_step)
    throw std::invalid_argument("local SGD timing: post-local SGD needs its synchronous steps' spec");
  std::unique_ptr<Collective> average = make(CollectiveKind::Allreduce, "params");
  std::unique_ptr<SyncStepper> synchronous;
  if (spec.sync_until_step > 0) synchronous = std::make_unique<SyncStepper>(platform, *spec.sync_step, make);
  const bool stand_in = spec.one_rank_may_stand_in && identical_workers(platform) && average->can_stand_in_for_all() &&
                        (!synchronous || synchronous->can_stand_in_for_all());
  if (stand_in) {
    average->stand_in_for_all();
    if (synchronous) synchronous->stand_in_for_all();
  }
  const int n = stand_in ? 1 : platform.num_workers();

  LocalSgdTimingOutcome out;
  out.timing.one_rank_for_all = stand_in;
  out.timing.step_end_s.assign(spec.steps, 0.0);
  out.timing.step_wall_s.assign(spec.steps, 0.0);
  const auto wall_start = std::chrono::steady_clock::now();
  // Local steps are counted from the end of the synchronous ones (sync_dp.cpp, model_averaging_after).
  const auto averaged_after = [&](int step) {
    return step >= spec.sync_until_step &&
           ((step + 1 - spec.sync_until_step) % spec.local_steps == 0 || step + 1 == spec.steps);
  };
  for (int step = 0; step < spec.steps; ++step) out.averagings += averaged_after(step) ? 1 : 0;
  std::vector<double> compute(n, 0.0), exposed(n, 0.0);
  // Each worker's compute before each point where the workers meet (a synchronous step's allreduces, a model
  // average): what a worker waits there beyond its own is for the slowest peer, not for the network.
  std::vector<std::vector<double>> before_meeting(n);
  for (int r = 0; r < n; ++r) {
    if (synchronous) synchronous->start(r);
    sg4::Actor::create("worker" + std::to_string(r), platform.workers[r], [&, r] {
      double since_meeting = 0;  // compute since the last meeting
      for (int step = 0; step < spec.steps; ++step) {
        const double start = sg4::Engine::get_clock();
        const double multiplier = spec.stragglers ? spec.stragglers->compute_multiplier(r, step) : 1.0;
        double computed_s = 0;
        if (step < spec.sync_until_step) {
          double backward = 0;
          computed_s = synchronous->step(r, step, multiplier, &backward);
          before_meeting[r].push_back(since_meeting + backward);
          since_meeting = computed_s - backward;  // the optimizer step, after the allreduces
        } else {
          sg4::this_actor::execute(spec.forward_flops * multiplier);
          sg4::this_actor::execute(spec.backward_update_flops * multiplier);
          computed_s = sg4::Engine::get_clock() - start;
          since_meeting += computed_s;
          if (averaged_after(step)) {
            before_meeting[r].push_back(since_meeting);
            since_meeting = 0;
            average->run(r, spec.averaged_bytes);
          }
        }
        compute[r] += computed_s;
        const double end = sg4::Engine::get_clock();
        exposed[r] += (end - start) - computed_s;
        out.timing.step_end_s[step] = std::max(out.timing.step_end_s[step], end);
        out.timing.step_wall_s[step] =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
      }
    });
  }
  sg4::Engine::get_instance()->run();
  for (int r = 0; r < n; ++r) {
    double waiting = 0;
    for (size_t m = 0; m < before_meeting[r].size(); ++m) {
      double slowest = 0;
      for (int p = 0; p < n; ++p)
        if (m < before_meeting[p].size()) slowest = std::max(slowest, before_meeting[p][m]);
      waiting += wait_for_slowest(slowest, before_meeting[r][m]);
    }
    waiting = std::min(waiting, exposed[r]);
    out.timing.compute_s += compute[r] / (static_cast<double>(n) * spec.steps);
    out.timing.exposed_s += (exposed[r] - waiting) / (static_cast<double>(n) * spec.steps);
    out.timing.waiting_s += waiting / (static_cast<double>(n) * spec.steps);
  }
  out.timing.bytes_sent = average->bytes_sent() + (synchronous ? synchronous->bytes_sent() : 0);
  out.timing.buckets = synchronous ? synchronous->buckets() : 0;
  return out;
}

}  // namespace dtsim::sim
