// Timing-only asynchronous parameter server: the simulated time of a workload too large to compute trained
// by workers that pull from server shards, compute a gradient and push it back, with no numerics at all.
// The protocol is async-ps's (ps/async_ps.hpp) without the values: the same messages at the same sizes on the
// same channel, the pull that travels with each push, updates applied in the order pushes arrive, pulls held
// by a staleness bound, and every gradient's staleness counted from the version its pull was served at. A proxy run of the same workload
// charges the same computations and messages, so the two give the same simulated time
// (tests/cli/strategy_timing_cli_test.cpp).
//
// Not simulated here (refused or flagged by the configuration): faults and compression.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/strategies/ps/ps_stats.hpp"
#include "sim/strategies/timing/sync_timing.hpp"
#include "sim/world/platform.hpp"
#include "sim/world/stragglers.hpp"

namespace dtsim::sim {

struct PsTimingSpec {
  double gradient_flops = 0;             // a worker's forward and backward pass, at its host's nominal speed
  std::vector<uint64_t> push_bytes;      // per shard: its slice of a gradient on the wire
  std::vector<uint64_t> pull_bytes;      // per shard: its slice of the weights on the wire
  int gradients_per_update = 1;          // k of n-softsync: a shard's update averages k gradients
  int64_t staleness_bound = -1;          // s of stale-synchronous parallel; -1: unbounded
  int steps = 10;                        // global batches' worth of gradients: steps × workers in all
  // Per-computation slowdowns ([stragglers]): worker w's c-th gradient (from 0) takes compute_multiplier(w, c)
  // times its FLOPs, as async-ps charges it. Null: none.
  const StragglerModel* stragglers = nullptr;
};

struct PsTimingOutcome {
  // When shard 0 had applied (s + 1) × workers gradients, and the simulator's wall seconds until then.
  TimingOutcome timing;
  double end_s = 0;                      // when the last shard had applied its last gradient
  StalenessStats staleness;
  int64_t updates = 0;                   // shard 0's
  explicit PsTimingOutcome(int workers) : staleness(workers) {}
};

// Runs the spec on the platform's workers and server hosts (one shard each) in the engine that built them,
// which must not have run yet.
PsTimingOutcome run_ps_timing(const Platform& platform, const PsTimingSpec& spec);

}  // namespace dtsim::sim
