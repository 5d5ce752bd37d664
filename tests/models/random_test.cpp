// Statistical and determinism properties of the random streams, with tolerances from the distributions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <vector>

#include "models/random.hpp"

namespace dtsim::models {
namespace {

TEST(Random, StreamsAreDeterministicAndIndependentOfEachOther) {
  Rng a(7, "data-order", 3), b(7, "data-order", 3);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next_u64(), b.next_u64());
  std::set<uint64_t> seeds{derive_seed(7, "data-order", 3), derive_seed(7, "data-order", 4),
                           derive_seed(7, "init", 3), derive_seed(8, "data-order", 3)};
  EXPECT_EQ(seeds.size(), 4u);
}

TEST(Random, UniformHasTheRightMeanAndVariance) {
  Rng rng(1);
  const int n = 200000;
  double sum = 0, sum_sq = 0;
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum_sq += u * u;
  }
  const double mean = sum / n, var = sum_sq / n - mean * mean;
  // Standard error of the mean is sqrt(1/12 / n) ≈ 6.5e-4; allow 5 of them.
  EXPECT_NEAR(mean, 0.5, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(var, 1.0 / 12, 2e-3);
}

TEST(Random, BelowIsInRangeAndUniform) {
  Rng rng(2);
  const int k = 7, n = 70000;
  std::vector<int> counts(k, 0);
  for (int i = 0; i < n; ++i) {
    const uint64_t v = rng.below(k);
    ASSERT_LT(v, static_cast<uint64_t>(k));
    ++counts[v];
  }
  // Pearson's chi-square with 6 degrees of freedom: P(X > 22.46) = 0.001.
  double chi2 = 0;
  const double expected = static_cast<double>(n) / k;
  for (const int c : counts) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 22.46);
}

TEST(Random, NormalHasZeroMeanAndUnitVariance) {
  Rng rng(3);
  const int n = 200000;
  double sum = 0, sum_sq = 0;
  for (int i = 0; i < n; ++i) {
    const double z = rng.normal();
    sum += z;
    sum_sq += z * z;
  }
  EXPECT_NEAR(sum / n, 0.0, 5 / std::sqrt(n));
  EXPECT_NEAR(sum_sq / n, 1.0, 5 * std::sqrt(2.0 / n));
}

TEST(Random, ShuffleIsAPermutationAndMovesEveryPositionEvenly) {
  const int n = 5, trials = 50000;
  std::vector<std::vector<int>> where(n, std::vector<int>(n, 0));
  Rng rng(4);
  for (int t = 0; t < trials; ++t) {
    std::vector<int> v(n);
    std::iota(v.begin(), v.end(), 0);
    rng.shuffle(v);
    std::vector<int> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(sorted, (std::vector<int>{0, 1, 2, 3, 4}));
    for (int i = 0; i < n; ++i) ++where[v[i]][i];
  }
  // Each element lands at each position with probability 1/5: binomial sd = sqrt(trials·0.16) ≈ 89.
  for (int e = 0; e < n; ++e)
    for (int i = 0; i < n; ++i) EXPECT_NEAR(where[e][i], trials / n, 5 * 89) << e << "@" << i;
}

}  // namespace
}  // namespace dtsim::models
