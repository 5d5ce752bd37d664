// NetworkObjective's mini-batches from a worker's shard, with and without training.cap_batch_at_shard: a
// capped batch is the whole shard (one full-batch gradient, the same at every step), an uncapped one wraps
// into the next pass and so weighs some samples twice; FLOPs follow the batch actually taken.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/architectures.hpp"
#include "models/objective.hpp"
#include "models/partition.hpp"
#include "tests/models/gradient_check.hpp"

namespace dtsim::models {
namespace {

constexpr int kFeatures = 5, kClasses = 3, kSamples = 20, kBatch = 8;

Dataset random_dataset(int n, unsigned seed) {
  Dataset d;
  d.name = "random";
  d.num_samples = n;
  d.num_features = kFeatures;
  d.num_classes = kClasses;
  d.width = kFeatures;
  const std::vector<double> x = gradcheck::random_values(static_cast<size_t>(n) * kFeatures, seed);
  d.features.assign(x.begin(), x.end());
  for (int i = 0; i < n; ++i) d.labels.push_back(i % kClasses);
  return d;
}

NetworkSpec logreg_spec() {
  NetworkSpec s;
  s.arch = Architecture::LogReg;
  s.channels = 1;
  s.height = 1;
  s.width = kFeatures;
  s.classes = kClasses;
  return s;
}

// Shard 0 holds 3 samples (fewer than a batch), shard 1 the other 17.
Partition small_and_large_shards() {
  std::vector<int32_t> large(kSamples - 3);
  std::iota(large.begin(), large.end(), 3);
  std::vector<std::vector<int32_t>> shards{{0, 1, 2}, large};
  return {shards, partition_hash(shards)};
}

// The mean-loss gradient over `samples`, computed by the network directly (each sample once).
std::vector<float> full_batch_gradient(const Network<float>& net, gpu::Ops<float>& ops, const Dataset& data,
                                       const std::vector<float>& params, const std::vector<int32_t>& samples) {
  const int n = static_cast<int>(samples.size());
  auto ws = net.make_workspace(ops, n);
  std::vector<float> x;
  std::vector<int32_t> y;
  for (const int32_t i : samples) {
    x.insert(x.end(), data.sample(i), data.sample(i) + kFeatures);
    y.push_back(data.labels[i]);
  }
  std::vector<float> grads(params.size());
  net.loss_and_gradient(ops, ws, params.data(), x.data(), y.data(), n, grads.data());
  return grads;
}

double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(static_cast<double>(a[i]) - b[i]));
  return d;
}

class ObjectiveBatch : public ::testing::Test {
 protected:
  gpu::CpuOps<float> ops_;
  Dataset train_ = random_dataset(kSamples, 11), test_ = random_dataset(6, 12);
  std::unique_ptr<Network<float>> reference_ = make_network<float>(logreg_spec());
  std::vector<float> params_ = [this] {
    std::vector<float> p(reference_->num_params());
    reference_->init_params(p.data(), 3);
    for (size_t i = 0; i < p.size(); ++i) p[i] += 0.05f * static_cast<float>(i % 7) - 0.15f;  // not symmetric
    return p;
  }();

  NetworkObjective objective(bool cap, const std::optional<Partition>& partition) {
    return NetworkObjective(make_network<float>(logreg_spec()), ops_, train_, test_, 2, kBatch, partition, 5, cap);
  }
  std::vector<float> gradient(NetworkObjective& o, int worker, int64_t step) {
    std::vector<float> g(params_.size());
    o.gradient(worker, step, params_.data(), g.data(), NumericsOptions{});
    return g;
  }
};

TEST_F(ObjectiveBatch, CappedBatchIsTheWholeShardAtEveryStep) {
  NetworkObjective capped = objective(true, small_and_large_shards());
  EXPECT_EQ(capped.batch(0), 3);
  EXPECT_EQ(capped.batch(1), kBatch);
  const std::vector<float> expected = full_batch_gradient(*reference_, ops_, train_, params_, {0, 1, 2});
  for (int64_t step = 0; step < 4; ++step)  // each step's shuffle visits the 3 samples in another order
    EXPECT_LT(max_difference(gradient(capped, 0, step), expected), 1e-6) << "step " << step;
  const double per_sample = reference_->forward_flops_per_sample() + reference_->backward_flops_per_sample();
  EXPECT_DOUBLE_EQ(capped.flops_per_gradient(0), 3 * per_sample);
  EXPECT_DOUBLE_EQ(capped.flops_per_gradient(1), kBatch * per_sample);
  double segments = capped.forward_flops(0);
  for (const GradientSegment& s : capped.gradient_segments(0)) segments += s.backward_flops;
  EXPECT_NEAR(segments, 3 * per_sample, 1e-9 * per_sample);
}

TEST_F(ObjectiveBatch, UncappedBatchWrapsAndWeighsSomeSamplesTwice) {
  NetworkObjective wrapping = objective(false, small_and_large_shards());
  EXPECT_EQ(wrapping.batch(0), kBatch);
  // 8 draws from 3 samples: multiplicities 3, 3 and 2, so the mean is not the full-batch gradient.
  const std::vector<float> full = full_batch_gradient(*reference_, ops_, train_, params_, {0, 1, 2});
  EXPECT_GT(max_difference(gradient(wrapping, 0, 0), full), 1e-4);
}

TEST_F(ObjectiveBatch, WithoutAPartitionTheCapChangesNothing) {
  NetworkObjective capped = objective(true, std::nullopt), plain = objective(false, std::nullopt);
  for (int w = 0; w < 2; ++w) {
    EXPECT_EQ(capped.batch(w), kBatch);
    EXPECT_EQ(gradient(capped, w, 1), gradient(plain, w, 1));
  }
}

}  // namespace
}  // namespace dtsim::models
