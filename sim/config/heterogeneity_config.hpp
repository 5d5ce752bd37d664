// What makes workers unequal over time: slow nodes, random per-step slowdowns, background traffic and
// failures. Plain data, resolved from the scenario (a seeded choice of slow workers is already made here),
// so that strategies and tests can build and read it without SimGrid.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "models/name_table.hpp"

namespace dtsim::sim {

class Scenario;

inline constexpr double kNever = std::numeric_limits<double>::infinity();

// A worker that runs slower than the GPU profile for the whole run.
struct SlowWorker {
  int worker = 0;
  double speed_factor = 1.0;  // fraction of the sustained FLOP rate, in (0, 1]
  bool own_factor = false;    // given with the rank ("5:0.25"), not stragglers.slow_factor
};

struct StragglerConfig {
  std::vector<SlowWorker> slow_workers;  // ascending ranks, each at most once
  double step_probability = 0.0;         // chance that a worker's step is slowed down
  double step_slowdown = 1.0;            // compute-time multiplier of a slowed step (>= 1)
  double lognormal_sigma = 0.0;          // jitter of every step: mean-one lognormal multiplier; 0 = none
  bool chosen_at_random = false;         // slow_workers drawn by stragglers.slow_fraction (from the seed)

  bool has_random_slowdowns() const { return (step_probability > 0 && step_slowdown != 1.0) || lognormal_sigma > 0; }
};

// One corner of a piecewise-constant bandwidth profile: from `time` on, the link carries `fraction` of its
// nominal bandwidth (until the next point).
struct BandwidthPoint {
  double time = 0.0;
  double fraction = 1.0;  // (0, 1]
};

// A bandwidth profile applied to the links of some workers (both directions of each). Before its first point
// a link runs at its nominal bandwidth. With a period P the points repeat at t + kP for k = 1, 2, …; the level
// reached at the end of one period holds until the first point of the next.
struct LinkProfile {
  std::vector<int> workers;            // whose links; empty = every worker's link
  std::vector<BandwidthPoint> points;  // strictly increasing times
  double period = 0.0;                 // 0 = play once
};

// Traffic from outside the training job between two workers, competing for the links on its route with
// max-min fair sharing.
struct BackgroundFlow {
  int from = 0;
  int to = 0;
  double start = 0.0;
  double end = kNever;
  double rate = 0.0;  // bytes/s cap; 0 = as fast as its fair share allows
};

struct BackgroundConfig {
  std::vector<LinkProfile> link_profiles;
  std::vector<BackgroundFlow> flows;

  bool empty() const { return link_profiles.empty() && flows.empty(); }  // no other traffic on the links
};

// A failure: the target is off on [down_at, up_at).
enum class FaultTarget {
  Worker,  // the worker's host: its actors are killed, executions on it fail
  Node,    // every worker of the node (platform.workers_of_node)
  Link,    // the worker's own link (platform.worker_links), both directions: transfers over it fail
};

const models::NameTable<FaultTarget>& fault_target_table();  // worker, node, link
const char* to_string(FaultTarget target);

struct FaultEvent {
  FaultTarget target = FaultTarget::Worker;
  int index = 0;  // worker rank, or node index for FaultTarget::Node
  double down_at = 0.0;
  double up_at = kNever;
};

struct FaultConfig {
  std::vector<FaultEvent> events;  // in the order written
};

struct HeterogeneityConfig {
  StragglerConfig stragglers;
  BackgroundConfig background;
  FaultConfig faults;

  bool empty() const {
    return stragglers.slow_workers.empty() && !stragglers.has_random_slowdowns() && background.empty() &&
           faults.events.empty();
  }
};

// Reads the [stragglers], [background] and [faults] keys; a worker index beyond `workers` (cluster.workers)
// or overlapping failures throw InputError at the key. The workers chosen by stragglers.slow_fraction come
// from `seed` (run.seed). Whether the strategy survives failures is a cross-section rule (run_checks.hpp).
HeterogeneityConfig make_heterogeneity_config(const Scenario& scenario, int workers, uint64_t seed);

// The `count` workers out of `workers` that stragglers.slow_fraction picks: a seeded shuffle, ascending.
std::vector<int> choose_slow_workers(int workers, int count, uint64_t seed);

}  // namespace dtsim::sim
