#include "models/feature_noise.hpp"

#include "models/random.hpp"

namespace dtsim::models {

double FeatureNoise::std_of(int client) const {
  if (!active()) return 0.0;
  return max_std * static_cast<double>(client) / static_cast<double>(clients - 1);
}

namespace {

void add_normal(Rng& rng, double std, float* values, size_t count) {
  if (std == 0.0) return;
  for (size_t i = 0; i < count; ++i) values[i] += static_cast<float>(std * rng.normal());
}

}  // namespace

void add_feature_noise(const FeatureNoise& noise, int client, int64_t step, float* values, size_t count) {
  const double std = noise.std_of(client);
  if (std == 0.0) return;
  Rng rng(derive_seed(noise.seed, "feature-noise", static_cast<uint64_t>(client)), "step", static_cast<uint64_t>(step));
  add_normal(rng, std, values, count);
}

Dataset noisy_test_copies(const Dataset& test, const FeatureNoise& noise) {
  if (!noise.active()) return test;
  Dataset out = test;
  out.name = test.name + " (" + std::to_string(noise.clients) + " noisy copies)";
  out.num_samples = test.num_samples * noise.clients;
  out.features.clear();
  out.labels.clear();
  out.features.reserve(test.features.size() * static_cast<size_t>(noise.clients));
  out.labels.reserve(test.labels.size() * static_cast<size_t>(noise.clients));
  for (int w = 0; w < noise.clients; ++w) {
    const size_t start = out.features.size();
    out.features.insert(out.features.end(), test.features.begin(), test.features.end());
    out.labels.insert(out.labels.end(), test.labels.begin(), test.labels.end());
    Rng rng(noise.seed, "feature-noise-test", static_cast<uint64_t>(w));
    add_normal(rng, noise.std_of(w), out.features.data() + start, test.features.size());
  }
  out.content_hash = dataset_content_hash(out);
  return out;
}

}  // namespace dtsim::models
