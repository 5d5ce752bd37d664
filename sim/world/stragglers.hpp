// How fast each worker computes: a persistent speed factor per worker (applied as the host's speed by
// apply_heterogeneity) and random per-step slowdowns that a strategy applies by charging
// execute(flops × compute_multiplier(worker, step)).
//
// Every draw comes from its own stream, derived from (seed, purpose, worker) and then the step, so a value
// never depends on the order in which actors ask for it, and changing one knob (the lognormal sigma) does not
// reshuffle the other (which steps are slowed).
#pragma once

#include <cstdint>

#include "sim/config/heterogeneity_config.hpp"

namespace dtsim::sim {

class StragglerModel {
 public:
  StragglerModel() = default;  // every worker nominal
  StragglerModel(const StragglerConfig& config, uint64_t seed);

  // Fraction of the sustained FLOP rate `worker` runs at for the whole run (1 = nominal). Already part of
  // the host's speed once apply_heterogeneity ran: do not multiply the FLOPs by its inverse as well. (SimGrid
  // shows it as host->get_available_speed(); host->get_speed() stays the unscaled peak.)
  double speed_factor(int worker) const;

  // Whether `worker`'s step `step` is one of the slowed ones (probability step_probability).
  bool step_slowed(int worker, int64_t step) const;
  // The lognormal jitter of that step: exp(sigma·Z − sigma²/2), mean one; exactly 1 when sigma is 0.
  double jitter(int worker, int64_t step) const;
  // What the strategy multiplies the step's FLOPs by: (step_slowdown if slowed, else 1) × jitter. Pure:
  // the same (worker, step) always gives the same value.
  double compute_multiplier(int worker, int64_t step) const;

  // The mean of compute_multiplier over steps: 1 + p·(k − 1) (the jitter has mean one).
  double mean_multiplier() const;
  bool has_random_slowdowns() const { return config_.has_random_slowdowns(); }
  const StragglerConfig& config() const { return config_; }

 private:
  StragglerConfig config_;
  uint64_t seed_ = 0;
};

}  // namespace dtsim::sim
