// Statistical and determinism properties of the random streams, with tolerances from the distributions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <stdexcept>
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

// Sample mean and variance of n draws, the two moments the closed forms below are checked against.
struct Moments {
  double mean = 0, variance = 0;
};

template <class Draw>
Moments moments_of(int n, Draw draw) {
  double sum = 0, sum_sq = 0;
  for (int i = 0; i < n; ++i) {
    const double x = draw();
    sum += x;
    sum_sq += x * x;
  }
  const double mean = sum / n;
  return {mean, (sum_sq - n * mean * mean) / (n - 1)};
}

TEST(Random, LognormalLogHasTheGivenMeanAndSd) {
  Rng rng(5);
  const int n = 100000;
  const double mu = 4, sigma = 2;
  const Moments m = moments_of(n, [&] { return std::log(rng.lognormal(mu, sigma)); });
  EXPECT_NEAR(m.mean, mu, 5 * sigma / std::sqrt(n));
  // Var of a normal sample variance is 2σ⁴/(n−1).
  EXPECT_NEAR(m.variance, sigma * sigma, 5 * sigma * sigma * std::sqrt(2.0 / (n - 1)));
}

TEST(Random, GammaHasMeanAndVarianceEqualToItsShape) {
  // Gamma(k, 1): mean k, variance k, excess kurtosis 6/k, hence fourth central moment 3k² + 6k and
  // Var(sample variance) ≈ (μ₄ − σ⁴)/n = (2k² + 6k)/n. Shapes below 1 exercise the boost.
  const int n = 200000;
  for (const double k : {0.05, 0.3, 0.5, 1.0, 2.5, 10.0}) {
    Rng rng(6, "gamma-test", static_cast<uint64_t>(k * 100));
    const Moments m = moments_of(n, [&] {
      const double x = rng.gamma(k);
      EXPECT_GE(x, 0.0);
      return x;
    });
    EXPECT_NEAR(m.mean, k, 5 * std::sqrt(k / n)) << "shape " << k;
    EXPECT_NEAR(m.variance, k, 5 * std::sqrt((2 * k * k + 6 * k) / n)) << "shape " << k;
  }
}

TEST(Random, GammaOfShapeOneHalfHasTheChiSquareCdf) {
  // Gamma(½, 1) is Z²/2 for a standard normal Z, so P(X ≤ x) = P(|Z| ≤ √(2x)) = erf(√x). The shape < 1
  // path is the boost, which moments alone would not pin down; check the whole distribution at a few points.
  Rng rng(7);
  const int n = 200000;
  const std::vector<double> points{0.01, 0.1, 0.5, 1.0, 3.0};
  std::vector<int> below(points.size(), 0);
  for (int i = 0; i < n; ++i) {
    const double x = rng.gamma(0.5);
    for (size_t p = 0; p < points.size(); ++p) below[p] += x <= points[p];
  }
  for (size_t p = 0; p < points.size(); ++p) {
    const double expected = std::erf(std::sqrt(points[p]));
    EXPECT_NEAR(static_cast<double>(below[p]) / n, expected, 5 * std::sqrt(expected * (1 - expected) / n))
        << "x = " << points[p];
  }
}

TEST(Random, GammaRejectsNonPositiveShapes) {
  Rng rng(8);
  EXPECT_THROW(rng.gamma(0.0), std::invalid_argument);
  EXPECT_THROW(rng.gamma(-1.0), std::invalid_argument);
  EXPECT_THROW(rng.dirichlet({1.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(rng.dirichlet({}), std::invalid_argument);
}

TEST(Random, DirichletComponentsHaveTheClosedFormMeanAndVariance) {
  // Dir(α): E[p_i] = α_i/α₀, Var[p_i] = α_i(α₀ − α_i) / (α₀²(α₀ + 1)), with α₀ = Σα.
  const std::vector<double> alpha{0.5, 1.0, 2.5, 6.0};
  const double a0 = 10.0;
  const int n = 100000;
  Rng rng(9);
  std::vector<double> sum(alpha.size(), 0), sum_sq(alpha.size(), 0);
  for (int t = 0; t < n; ++t) {
    const std::vector<double> p = rng.dirichlet(alpha);
    ASSERT_EQ(p.size(), alpha.size());
    double total = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      ASSERT_GE(p[i], 0.0);
      total += p[i];
      sum[i] += p[i];
      sum_sq[i] += p[i] * p[i];
    }
    ASSERT_NEAR(total, 1.0, 1e-12);
  }
  for (size_t i = 0; i < alpha.size(); ++i) {
    const double mean = alpha[i] / a0, var = alpha[i] * (a0 - alpha[i]) / (a0 * a0 * (a0 + 1));
    const double sample_mean = sum[i] / n, sample_var = sum_sq[i] / n - sample_mean * sample_mean;
    EXPECT_NEAR(sample_mean, mean, 5 * std::sqrt(var / n)) << i;
    // p_i ∈ [0, 1], so its fourth central moment is at most its variance: Var(sample var) ≤ var/n.
    EXPECT_NEAR(sample_var, var, 5 * std::sqrt(var / n)) << i;
  }
}

TEST(Random, DirichletWithTinyConcentrationsStaysFiniteAndConcentrated) {
  // With α = 0.001 per component a naive Gamma(α) draw underflows to 0 in about half of the cases, and all ten
  // at once in about one draw in 1600; the result must still be a probability vector. The mean stays 1/K
  // and the vector is nearly one-hot: E[max p] → 1 as α → 0.
  const int k = 10, n = 20000;
  Rng rng(10);
  double sum_first = 0, sum_max = 0;
  for (int t = 0; t < n; ++t) {
    const std::vector<double> p = rng.dirichlet(std::vector<double>(k, 0.001));
    double total = 0;
    for (const double x : p) {
      ASSERT_TRUE(std::isfinite(x));
      total += x;
    }
    ASSERT_NEAR(total, 1.0, 1e-12);
    sum_first += p[0];
    sum_max += *std::max_element(p.begin(), p.end());
  }
  const double var = 0.1 * 0.9 / (k * 0.001 + 1);
  EXPECT_NEAR(sum_first / n, 0.1, 5 * std::sqrt(var / n));
  EXPECT_GT(sum_max / n, 0.95);
}

TEST(Random, GammaAndDirichletAreSeeded) {
  Rng a(11, "partition", 2), b(11, "partition", 2), c(12, "partition", 2);
  EXPECT_EQ(a.gamma(0.7), b.gamma(0.7));
  EXPECT_EQ(a.dirichlet({0.3, 0.3, 0.3}), b.dirichlet({0.3, 0.3, 0.3}));
  EXPECT_NE(Rng(11, "partition", 2).gamma(0.7), c.gamma(0.7));
}

}  // namespace
}  // namespace dtsim::models
