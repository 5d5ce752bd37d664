#include "sim/world/stragglers.hpp"

#include <cmath>

#include "models/random.hpp"

namespace dtsim::sim {
namespace {

// The stream of one (purpose, worker, step): a fresh generator each time, so no state is shared between
// actors and the order of the calls cannot matter.
models::Rng step_stream(uint64_t seed, const char* purpose, int worker, int64_t step) {
  return models::Rng(models::derive_seed(seed, purpose, static_cast<uint64_t>(worker)), "step",
                     static_cast<uint64_t>(step));
}

}  // namespace

StragglerModel::StragglerModel(const StragglerConfig& config, uint64_t seed) : config_(config), seed_(seed) {}

double StragglerModel::speed_factor(int worker) const {
  for (const SlowWorker& s : config_.slow_workers)
    if (s.worker == worker) return s.speed_factor;
  return 1.0;
}

bool StragglerModel::step_slowed(int worker, int64_t step) const {
  if (config_.step_probability <= 0.0) return false;
  if (config_.step_probability >= 1.0) return true;
  return step_stream(seed_, "straggler-step", worker, step).uniform() < config_.step_probability;
}

double StragglerModel::jitter(int worker, int64_t step) const {
  const double sigma = config_.lognormal_sigma;
  if (sigma <= 0.0) return 1.0;
  // log-mean −sigma²/2 makes the mean exp(μ + sigma²/2) exactly one: the jitter spreads compute times
  // without changing their average, so its cost in a synchronous step is the tail alone.
  return step_stream(seed_, "straggler-jitter", worker, step).lognormal(-0.5 * sigma * sigma, sigma);
}

double StragglerModel::compute_multiplier(int worker, int64_t step) const {
  const double slowdown = step_slowed(worker, step) ? config_.step_slowdown : 1.0;
  return slowdown * jitter(worker, step);
}

double StragglerModel::mean_multiplier() const {
  return 1.0 + config_.step_probability * (config_.step_slowdown - 1.0);
}

}  // namespace dtsim::sim
