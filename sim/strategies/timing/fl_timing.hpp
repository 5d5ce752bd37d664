// Timing-only federated learning: the simulated time of rounds of a workload too large to compute, with no
// numerics at all. Each round is federated learning's (federated/federated.hpp) without the values: the
// same plan (federated_plan.hpp: availability draws and windows, ⌈K(1+f)⌉ clients sampled, protocol
// stragglers), secure aggregation's messages and host time when it is on, every
// selected client downloading the model, running its local steps and uploading its update, the server
// keeping the first K reports in arrival order (until the deadline) and cancelling the rest, then aggregating (2 FLOPs per value
// of every kept update). A proxy run of the same workload charges the same transfers and computations, so
// the two give the same simulated time (tests/cli/strategy_timing_cli_test.cpp).
//
// Not simulated here (refused or flagged by the configuration): faults and compression.
#pragma once

#include <cstdint>
#include <optional>

#include "sim/strategies/federated/federated_plan.hpp"
#include "sim/strategies/federated/federated_secagg.hpp"
#include "sim/strategies/timing/sync_timing.hpp"
#include "sim/world/platform.hpp"
#include "sim/world/stragglers.hpp"

namespace dtsim::sim {

struct FlTimingSpec {
  double step_flops = 0;          // a local step: forward, backward and optimizer, at the host's nominal speed
  uint64_t download_bytes = 0;    // per selected client and round
  uint64_t upload_bytes = 0;      // per reporting client and round
  double aggregation_flops = 0;   // per kept update, on the server's host
  int64_t rounds = 10;
  // fl.straggler_policy = drop: a protocol straggler downloads and never reports, and a deadline closes the
  // round on whoever has not reported; partial: stragglers do less work, and a deadline stops local training
  // (the step in progress does not count) and the client uploads what it finished.
  bool drop_policy = false;
  double deadline_s = 0;          // fl.deadline, from the round's start; 0: none
  // fl.secure_aggregation: its setup messages, masked uploads, unmasking exchange and host time, for
  // `vectors` vectors of `wire_values` trained values per client (federated_secagg.hpp).
  std::optional<SecureAggregationCost> secure_aggregation;
  uint64_t wire_values = 0;
  int vectors = 1;
  // Per-step slowdowns ([stragglers]): client c's k-th local step of the run (from 0, cut ones included)
  // takes compute_multiplier(c, k) times its FLOPs, as federated learning charges it. Null: none.
  const StragglerModel* stragglers = nullptr;
};

struct FlTimingOutcome {
  TimingOutcome timing;           // step_end_s: when each round ended; compute_s, exposed_s: per client and round
  int64_t reports_kept = 0;       // over the run
  int64_t dropped_overcommit = 0; // reports later than the round's first K
  int64_t dropped_stragglers = 0; // protocol stragglers under the drop policy (or left with no work)
  int64_t dropped_deadline = 0;   // not reported by the deadline (drop), or no local step finished by it (partial)
  int64_t lost = 0;               // their availability window closed before they reported
  int64_t local_steps_kept = 0;   // the local steps finished in kept reports: the samples the model learnt from
  int64_t empty_rounds = 0;       // rounds in which no client was available
};

// Runs the spec's rounds, planned by `planner`, on the platform's workers (the clients) and its first server
// host, in the engine that built them, which must not have run yet.
FlTimingOutcome run_fl_timing(const Platform& platform, const FlTimingSpec& spec, const RoundPlanner& planner);

}  // namespace dtsim::sim
