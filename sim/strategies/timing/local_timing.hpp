// Timing-only local SGD: the simulated time of steps of a workload too large to compute, trained by workers
// that each take local steps (forward, backward, optimizer) on their own replica and average their trained
// weights with an allreduce every H steps and after the last, with no numerics at all. This is local SGD's
// step (sync/sync_dp.hpp, local_step) without the values, so a proxy run of the same workload gives the same
// simulated time (tests/cli/strategy_timing_cli_test.cpp).
//
// Post-local SGD (local.sync_until_step = S): the first S steps are synchronous data-parallel steps (the
// gradient buckets allreduced during backward, sync_timing.hpp's SyncStepper), then local steps whose
// averages fall every H steps counted from S, and after the last, as the run with numerics does. H = 1 is
// synchronous data parallelism, which sync_timing.hpp times (refused here).
#pragma once

#include <cstdint>

#include "sim/strategies/timing/sync_timing.hpp"
#include "sim/world/platform.hpp"

namespace dtsim::sim {

struct LocalSgdTimingSpec {
  double forward_flops = 0;          // per step and worker, at the host's nominal speed
  double backward_update_flops = 0;  // the backward pass and the optimizer step on the worker's replica
  uint64_t averaged_bytes = 0;       // the trained weights at their width: what each model average reduces
  int local_steps = 4;               // H
  int steps = 10;
  bool one_rank_may_stand_in = true; // false: simulate every rank even where one could stand in
  const StragglerModel* stragglers = nullptr;  // per-step slowdowns of worker r's step s; null: none
  int sync_until_step = 0;           // post-local SGD: steps before this one are synchronous
  const TimingSpec* sync_step = nullptr;  // those steps' spec (needed when sync_until_step > 0)
};

struct LocalSgdTimingOutcome {
  TimingOutcome timing;              // exposed_s: per step and worker, in model averages
  int averagings = 0;
};

// Runs the spec on every worker of `platform` in the engine that built it (which must not have run yet);
// `make` builds the model average's allreduce. As run_sync_timing, rank 0 stands in for identical workers
// when the allreduce is analytic.
LocalSgdTimingOutcome run_local_sgd_timing(const Platform& platform, const LocalSgdTimingSpec& spec,
                                           MakeCollective make);

}  // namespace dtsim::sim
