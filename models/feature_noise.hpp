// NIID-Bench's noise-based feature imbalance (Li, Diao, Chen & He, ICDE 2022, "feature distribution skew"):
// every client sees the same kind of data, but client w's inputs carry Gaussian noise whose standard
// deviation grows with w, from none for client 0 to `max_std` for the last. The benchmark adds fresh noise
// each time a sample is loaded (a torchvision transform), and tests on the union of every client's noisy copy
// of the test set; both are reproduced here. Pure numerics: the draws come from streams keyed by
// (seed, client, step), so they do not depend on the order in which a simulation runs the clients.
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/dataset.hpp"

namespace dtsim::models {

struct FeatureNoise {
  double max_std = 0;  // the last client's standard deviation, in the features' units (pixels in [0, 1])
  int clients = 1;
  uint64_t seed = 0;

  bool active() const { return max_std > 0 && clients > 1; }
  // Client w's standard deviation: max_std · w / (clients − 1), as NIID-Bench's noise_level.
  double std_of(int client) const;
};

// Adds N(0, std²) to each of the `count` values, drawn from the stream of (noise.seed, client, step).
void add_feature_noise(const FeatureNoise& noise, int client, int64_t step, float* values, size_t count);

// The test set NIID-Bench evaluates on under feature noise: `clients` copies of `test` one after the other,
// copy w with client w's noise (one fixed draw per copy). Without active noise, `test` itself.
Dataset noisy_test_copies(const Dataset& test, const FeatureNoise& noise);

}  // namespace dtsim::models
