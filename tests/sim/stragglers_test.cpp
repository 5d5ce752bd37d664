// Random per-step slowdowns: the same seed gives the same multipliers whatever order they are asked in, and
// their statistics match the documented distributions within tolerances derived from the sample size.
#include "sim/world/stragglers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/random.hpp"

namespace dtsim::sim {
namespace {

StragglerConfig random_config(double p, double k, double sigma) {
  StragglerConfig c;
  c.step_probability = p;
  c.step_slowdown = k;
  c.lognormal_sigma = sigma;
  return c;
}

constexpr int kWorkers = 16;
constexpr int64_t kSteps = 4000;  // 64 000 draws per statistic

TEST(StragglerModel, NominalByDefault) {
  const StragglerModel m;
  EXPECT_EQ(m.compute_multiplier(3, 7), 1.0);
  EXPECT_EQ(m.speed_factor(3), 1.0);
  EXPECT_FALSE(m.has_random_slowdowns());

  StragglerConfig c;
  c.slow_workers = {{2, 0.5}, {5, 0.25}};
  const StragglerModel slow(c, 1);
  EXPECT_EQ(slow.speed_factor(2), 0.5);
  EXPECT_EQ(slow.speed_factor(5), 0.25);
  EXPECT_EQ(slow.speed_factor(3), 1.0);
  // The persistent factor lives in the host speed, not in the per-step multiplier.
  EXPECT_EQ(slow.compute_multiplier(2, 0), 1.0);
}

TEST(StragglerModel, SameSeedSameMultipliersInAnyOrder) {
  const StragglerModel a(random_config(0.3, 3.0, 0.4), 42);
  const StragglerModel b(random_config(0.3, 3.0, 0.4), 42);
  std::vector<double> forward;
  for (int w = 0; w < kWorkers; ++w)
    for (int64_t s = 0; s < 200; ++s) forward.push_back(a.compute_multiplier(w, s));
  // b is asked in reverse and interleaved with unrelated calls: each value depends only on (seed, worker, step).
  std::vector<double> backward(forward.size());
  for (int w = kWorkers - 1; w >= 0; --w)
    for (int64_t s = 199; s >= 0; --s) {
      b.compute_multiplier((w + 5) % kWorkers, s * 7 + 3);
      backward[static_cast<size_t>(w * 200 + s)] = b.compute_multiplier(w, s);
    }
  EXPECT_EQ(forward, backward);
  // Another seed gives other draws.
  const StragglerModel c(random_config(0.3, 3.0, 0.4), 43);
  int same = 0;
  for (int w = 0; w < kWorkers; ++w)
    for (int64_t s = 0; s < 200; ++s) same += c.compute_multiplier(w, s) == forward[static_cast<size_t>(w * 200 + s)];
  EXPECT_LT(same, 10);
}

TEST(StragglerModel, ChangingTheJitterKeepsTheSlowedSteps) {
  const StragglerModel a(random_config(0.2, 2.0, 0.0), 7);
  const StragglerModel b(random_config(0.2, 2.0, 0.8), 7);
  for (int w = 0; w < kWorkers; ++w)
    for (int64_t s = 0; s < 500; ++s) ASSERT_EQ(a.step_slowed(w, s), b.step_slowed(w, s));
}

// p̂ is a mean of N Bernoulli(p) draws: standard error sqrt(p(1−p)/N); within 5 of them.
TEST(StragglerModel, FractionOfSlowedStepsIsTheProbability) {
  for (const double p : {0.01, 0.1, 0.5, 0.9}) {
    const StragglerModel m(random_config(p, 4.0, 0.0), 11);
    int64_t slowed = 0, n = 0;
    for (int w = 0; w < kWorkers; ++w)
      for (int64_t s = 0; s < kSteps; ++s, ++n) {
        const double x = m.compute_multiplier(w, s);
        ASSERT_TRUE(x == 1.0 || x == 4.0) << x;
        slowed += x == 4.0;
      }
    const double p_hat = static_cast<double>(slowed) / n;
    EXPECT_NEAR(p_hat, p, 5 * std::sqrt(p * (1 - p) / n)) << "p=" << p;
  }
  EXPECT_EQ(StragglerModel(random_config(1.0, 3.0, 0.0), 1).compute_multiplier(2, 9), 3.0);
  EXPECT_EQ(StragglerModel(random_config(0.0, 3.0, 0.0), 1).compute_multiplier(2, 9), 1.0);
}

// X = exp(σZ − σ²/2): E[X] = 1, Var[X] = exp(σ²) − 1, median exp(−σ²/2), E[ln X] = −σ²/2, sd[ln X] = σ.
TEST(StragglerModel, LognormalJitterHasMeanOne) {
  for (const double sigma : {0.1, 0.5, 1.0}) {
    const StragglerModel m(random_config(0.0, 1.0, sigma), 5);
    std::vector<double> x;
    for (int w = 0; w < kWorkers; ++w)
      for (int64_t s = 0; s < kSteps; ++s) x.push_back(m.compute_multiplier(w, s));
    const double n = static_cast<double>(x.size());
    double sum = 0, log_sum = 0, log_sq = 0;
    for (const double v : x) {
      ASSERT_GT(v, 0.0);
      sum += v;
      log_sum += std::log(v);
      log_sq += std::log(v) * std::log(v);
    }
    const double mean = sum / n, log_mean = log_sum / n;
    const double log_sd = std::sqrt(log_sq / n - log_mean * log_mean);
    EXPECT_NEAR(mean, 1.0, 5 * std::sqrt(std::expm1(sigma * sigma) / n)) << "sigma=" << sigma;
    EXPECT_NEAR(log_mean, -0.5 * sigma * sigma, 5 * sigma / std::sqrt(n)) << "sigma=" << sigma;
    // The sample sd of a normal has standard error ≈ σ/sqrt(2N).
    EXPECT_NEAR(log_sd, sigma, 5 * sigma / std::sqrt(2 * n)) << "sigma=" << sigma;
    // Median: the fraction of draws below exp(−σ²/2) is a Bernoulli(1/2) mean.
    const double median = std::exp(-0.5 * sigma * sigma);
    const double below =
        static_cast<double>(std::count_if(x.begin(), x.end(), [&](double v) { return v < median; })) / n;
    EXPECT_NEAR(below, 0.5, 5 * std::sqrt(0.25 / n)) << "sigma=" << sigma;
  }
}

// Both together: E[multiplier] = 1 + p(k − 1), since the slowdown and the jitter come from separate streams.
TEST(StragglerModel, CombinedMeanMultiplier) {
  const double p = 0.2, k = 3.0, sigma = 0.3;
  const StragglerModel m(random_config(p, k, sigma), 9);
  EXPECT_DOUBLE_EQ(m.mean_multiplier(), 1.0 + p * (k - 1));
  double sum = 0, sq = 0;
  int64_t n = 0;
  for (int w = 0; w < kWorkers; ++w)
    for (int64_t s = 0; s < kSteps; ++s, ++n) {
      const double x = m.compute_multiplier(w, s);
      sum += x;
      sq += x * x;
    }
  const double mean = sum / n;
  const double sd = std::sqrt(sq / n - mean * mean);
  EXPECT_NEAR(mean, m.mean_multiplier(), 5 * sd / std::sqrt(static_cast<double>(n)));
}

}  // namespace
}  // namespace dtsim::sim
