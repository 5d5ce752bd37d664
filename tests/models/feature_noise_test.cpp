// NIID-Bench's noise-based feature imbalance: the per-client standard deviation against its closed form
// (max · w / (clients − 1)), the draws' mean and spread, fresh draws per step and client that still repeat
// for the same seed, the benchmark's test set of noisy copies, and NetworkObjective adding exactly worker w's
// noise to the batch it trains on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/architectures.hpp"
#include "models/feature_noise.hpp"
#include "models/objective.hpp"
#include "models/partition.hpp"

namespace dtsim::models {
namespace {

struct Moments {
  double mean = 0, std = 0;
};

Moments moments(const std::vector<double>& v) {
  Moments m;
  for (const double x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  for (const double x : v) m.std += (x - m.mean) * (x - m.mean);
  m.std = std::sqrt(m.std / static_cast<double>(v.size() - 1));
  return m;
}

std::vector<double> drawn(const FeatureNoise& noise, int client, int64_t step, size_t n) {
  std::vector<float> values(n, 0.0f);
  add_feature_noise(noise, client, step, values.data(), n);
  return {values.begin(), values.end()};
}

TEST(FeatureNoise, StandardDeviationGrowsFromNoneOnTheFirstClientToTheMaxOnTheLast) {
  const FeatureNoise noise{0.1, 10, 7};
  EXPECT_EQ(noise.std_of(0), 0.0);
  EXPECT_DOUBLE_EQ(noise.std_of(3), 0.1 * 3 / 9);
  EXPECT_DOUBLE_EQ(noise.std_of(9), 0.1);
  EXPECT_FALSE((FeatureNoise{0.0, 10, 7}.active()));
  EXPECT_FALSE((FeatureNoise{0.1, 1, 7}.active()));
  EXPECT_EQ((FeatureNoise{0.1, 1, 7}.std_of(0)), 0.0);
}

TEST(FeatureNoise, DrawsHaveMeanZeroAndTheClientsStandardDeviation) {
  const FeatureNoise noise{0.3, 4, 11};
  constexpr size_t n = 400000;
  for (int client = 1; client < 4; ++client) {
    const Moments m = moments(drawn(noise, client, 5, n));
    const double std = noise.std_of(client);
    EXPECT_LT(std::abs(m.mean), 5 * std / std::sqrt(static_cast<double>(n))) << client;
    // The sample standard deviation's relative error is about 1/√(2n) = 0.0011.
    EXPECT_NEAR(m.std / std, 1.0, 0.006) << client;
  }
}

TEST(FeatureNoise, TheFirstClientAndInactiveNoiseLeaveValuesUntouched) {
  std::vector<float> values{0.25f, -1.5f, 3.0f};
  const std::vector<float> original = values;
  add_feature_noise(FeatureNoise{0.5, 3, 1}, 0, 4, values.data(), values.size());
  EXPECT_EQ(values, original);
  add_feature_noise(FeatureNoise{0.0, 3, 1}, 2, 4, values.data(), values.size());
  EXPECT_EQ(values, original);
  add_feature_noise(FeatureNoise{0.5, 3, 1}, 2, 4, values.data(), values.size());
  EXPECT_NE(values, original);
}

TEST(FeatureNoise, FreshForEveryStepAndClientAndTheSameForTheSameSeed) {
  const FeatureNoise noise{0.2, 3, 21};
  EXPECT_EQ(drawn(noise, 2, 8, 64), drawn(noise, 2, 8, 64));
  EXPECT_NE(drawn(noise, 2, 8, 64), drawn(noise, 2, 9, 64));
  // Clients 1 and 2 draw from different streams: their draws are not multiples of one another.
  const std::vector<double> a = drawn(noise, 1, 8, 64), b = drawn(noise, 2, 8, 64);
  EXPECT_NE(a[0] * 2, b[0]);
  EXPECT_NE(drawn(FeatureNoise{0.2, 3, 22}, 2, 8, 64), drawn(noise, 2, 8, 64));
}

Dataset ramp_dataset(int samples, int features) {
  Dataset d;
  d.name = "ramp";
  d.num_samples = samples;
  d.num_features = features;
  d.num_classes = 3;
  d.width = features;
  for (int i = 0; i < samples * features; ++i) d.features.push_back(static_cast<float>(i % 17) / 17.0f);
  for (int i = 0; i < samples; ++i) d.labels.push_back(i % 3);
  d.content_hash = dataset_content_hash(d);
  return d;
}

TEST(FeatureNoise, TheTestSetBecomesOneNoisyCopyPerClient) {
  const Dataset test = ramp_dataset(2000, 5);
  const FeatureNoise noise{0.6, 4, 3};
  const Dataset copies = noisy_test_copies(test, noise);
  ASSERT_EQ(copies.num_samples, 4 * 2000);
  ASSERT_EQ(copies.features.size(), 4 * test.features.size());
  EXPECT_EQ(copies.num_features, 5);
  EXPECT_NE(copies.content_hash, test.content_hash);
  const size_t per_copy = test.features.size();
  for (int w = 0; w < 4; ++w) {
    EXPECT_TRUE(std::equal(test.labels.begin(), test.labels.end(), copies.labels.begin() + w * 2000)) << w;
    std::vector<double> differences;
    for (size_t i = 0; i < per_copy; ++i)
      differences.push_back(static_cast<double>(copies.features[w * per_copy + i]) - test.features[i]);
    if (w == 0) {
      EXPECT_TRUE(std::all_of(differences.begin(), differences.end(), [](double d) { return d == 0.0; }));
      continue;
    }
    // 10,000 draws: the sample standard deviation is within about 0.7 % of the true one.
    EXPECT_NEAR(moments(differences).std / noise.std_of(w), 1.0, 0.03) << w;
  }
  const Dataset same = noisy_test_copies(test, FeatureNoise{0.0, 4, 3});
  EXPECT_EQ(same.num_samples, test.num_samples);
  EXPECT_EQ(same.content_hash, test.content_hash);
}

NetworkSpec logreg_spec(int features) {
  NetworkSpec s;
  s.arch = Architecture::LogReg;
  s.channels = 1;
  s.height = 1;
  s.width = features;
  s.classes = 3;
  return s;
}

// Each worker's shard is one sample and the batch is capped at the shard, so the batch is known exactly: the
// gradient must be the network's gradient at that sample plus the worker's noise for that step.
TEST(FeatureNoise, TheObjectiveTrainsEachWorkerOnItsNoisyBatch) {
  constexpr int kFeatures = 6;
  gpu::CpuOps<float> ops;
  const Dataset train = ramp_dataset(2, kFeatures), test = ramp_dataset(3, kFeatures);
  const std::vector<std::vector<int32_t>> shards{{0}, {1}};
  const Partition partition{shards, partition_hash(shards)};
  NetworkObjective objective(make_network<float>(logreg_spec(kFeatures)), ops, train, test, 2, 4, partition, 5, true);
  const FeatureNoise noise{0.7, 2, 13};
  objective.set_feature_noise(noise);
  auto net = make_network<float>(logreg_spec(kFeatures));
  std::vector<float> params(net->num_params());
  net->init_params(params.data(), 3);
  auto workspace = net->make_workspace(ops, 1);
  for (int worker = 0; worker < 2; ++worker)
    for (int64_t step = 0; step < 3; ++step) {
      std::vector<float> got(params.size()), expected(params.size());
      objective.gradient(worker, step, params.data(), got.data(), NumericsOptions{});
      std::vector<float> x(train.sample(worker), train.sample(worker) + kFeatures);
      add_feature_noise(noise, worker, step, x.data(), x.size());
      if (worker == 0) {
        EXPECT_TRUE(std::equal(x.begin(), x.end(), train.sample(0)));
      }
      const int32_t y = train.labels[worker];
      net->loss_and_gradient(ops, workspace, params.data(), x.data(), &y, 1, expected.data());
      EXPECT_EQ(got, expected) << "worker " << worker << ", step " << step;
    }
}

}  // namespace
}  // namespace dtsim::models
