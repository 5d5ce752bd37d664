// The compression operators against their defining properties (validation notes §4): top-k's contraction
// bound, random-k's and QSGD's unbiasedness with tolerances from their closed-form variances, QSGD's variance
// bound, the sign family by hand. One worker's Compressor on gpu::CpuOps<double> (host memory).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/compression/compression.hpp"
#include "models/random.hpp"

namespace dtsim::models {
namespace {

using Vec = std::vector<double>;

std::vector<TensorLayout> one_vector(size_t d) { return {{{"x", 0, d, false}, 0, 0}}; }

CompressionSettings settings_for(CompressorKind kind) {
  CompressionSettings s;
  s.kind = kind;
  return s;
}

double sum_squares(const Vec& x) {
  double s = 0;
  for (const double v : x) s += v * v;
  return s;
}

double squared_distance(const Vec& a, const Vec& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return s;
}

// Vectors of several shapes: Gaussian, heavy-tailed (Gaussian cubed), and with many exact ties.
Vec test_vector(size_t d, int variant, uint64_t seed) {
  Rng rng(seed, "compression-test", static_cast<uint64_t>(variant));
  Vec x(d);
  for (double& v : x) {
    const double z = rng.normal();
    v = variant % 3 == 0 ? z : variant % 3 == 1 ? z * z * z : std::round(2 * z) / 2;
  }
  return x;
}

TEST(TopK, SatisfiesTheContractionBound) {
  gpu::CpuOps<double> ops;
  for (const size_t d : {1u, 2u, 7u, 100u, 1000u}) {
    for (const double ratio : {0.001, 0.01, 0.1, 0.5, 1.0}) {
      CompressionSettings s = settings_for(CompressorKind::TopK);
      s.ratio = ratio;
      Compressor<double> c(ops, one_vector(d), d, s, 0);
      const double k = std::min<double>(d, std::max(1.0, std::round(ratio * d)));
      for (int variant = 0; variant < 12; ++variant) {
        const Vec x = test_vector(d, variant, 11);
        Vec y = x;
        const CompressionResult r = c.compress(y.data(), variant);
        // ‖x − top_k(x)‖² ≤ (1 − k/d)‖x‖²: the dropped values are the d − k smallest.
        const double error = squared_distance(x, y);
        EXPECT_LE(error, (1 - k / d) * sum_squares(x) * (1 + 1e-12)) << "d " << d << " ratio " << ratio;
        // k values kept unchanged (the zeros among them stay zero), none dropped larger than one kept.
        size_t kept = 0, nonzero = 0;
        double smallest_kept = INFINITY, largest_dropped = 0;
        for (size_t j = 0; j < d; ++j) {
          if (y[j] != 0 || x[j] == 0) {
            EXPECT_EQ(y[j], x[j]);
          }
          if (x[j] != 0) ++nonzero;
          if (y[j] != 0) {
            ++kept;
            smallest_kept = std::min(smallest_kept, std::fabs(x[j]));
          } else {
            largest_dropped = std::max(largest_dropped, std::fabs(x[j]));
          }
        }
        EXPECT_EQ(kept, std::min(static_cast<size_t>(k), nonzero));
        EXPECT_GE(smallest_kept, largest_dropped);
        const double input = sum_squares(x);  // the stats report 0 for an all-zero input
        EXPECT_NEAR(r.stats.relative_error(), input > 0 ? std::sqrt(error / input) : 0.0, 1e-12);
      }
    }
  }
}

TEST(TopK, LargeTensorsKeepExactlyTheRankedTopKWithTiesToTheLowerIndex) {
  // Above 2^16 values the selection goes through a histogram of the keys' bits; it must pick the very set a
  // full ranking by (magnitude descending, index ascending) picks, ties included.
  gpu::CpuOps<double> ops;
  const size_t d = 200'000;
  for (const int variant : {0, 1, 2}) {  // Gaussian, heavy-tailed, half-integers (many exact ties)
    for (const double ratio : {0.001, 0.01, 0.3}) {
      CompressionSettings s = settings_for(CompressorKind::TopK);
      s.ratio = ratio;
      Compressor<double> c(ops, one_vector(d), d, s, 0);
      const Vec x = test_vector(d, variant, 5);
      Vec y = x;
      c.compress(y.data(), 0);
      std::vector<size_t> order(d);
      for (size_t j = 0; j < d; ++j) order[j] = j;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return std::fabs(x[a]) > std::fabs(x[b]) || (std::fabs(x[a]) == std::fabs(x[b]) && a < b);
      });
      const size_t k = static_cast<size_t>(std::round(ratio * d));
      std::vector<char> expected(d, 0);
      for (size_t i = 0; i < k; ++i) expected[order[i]] = 1;
      size_t mismatches = 0;
      for (size_t j = 0; j < d; ++j) mismatches += (expected[j] ? x[j] : 0.0) != y[j] ? 1 : 0;
      EXPECT_EQ(mismatches, 0u) << "variant " << variant << " ratio " << ratio;
    }
  }
}

TEST(TopK, NonFiniteValuesAreKept) {
  gpu::CpuOps<double> ops;
  CompressionSettings s = settings_for(CompressorKind::TopK);
  s.ratio = 0.25;  // k = 1 of 4
  Compressor<double> c(ops, one_vector(4), 4, s, 0);
  Vec x = {1, std::numeric_limits<double>::quiet_NaN(), 5, -2};
  c.compress(x.data(), 0);
  EXPECT_TRUE(std::isnan(x[1]));
  EXPECT_EQ(x[2], 0.0);
}

// DGC's sampled threshold sends the c values at or above an estimated threshold: a top-c set, with c within
// [k/2, 2k] unless a fallback sent the exact top-k.
TEST(TopK, SampledThresholdSendsATopSetOfAboutK) {
  gpu::CpuOps<double> ops;
  for (const size_t d : {50u, 2000u, 30000u}) {
    for (const double ratio : {0.01, 0.05, 0.3}) {
      CompressionSettings s = settings_for(CompressorKind::TopK);
      s.ratio = ratio;
      s.sampled_threshold = true;
      Compressor<double> c(ops, one_vector(d), d, s, 3);
      const size_t k = static_cast<size_t>(std::max(1.0, std::round(ratio * d)));
      for (int variant = 0; variant < 6; ++variant) {
        const Vec x = test_vector(d, 3 * variant, 5);  // Gaussian: no zeros, no ties
        Vec y = x;
        const CompressionResult r = c.compress(y.data(), variant);
        size_t sent = 0;
        double smallest_kept = INFINITY, largest_dropped = 0;
        for (size_t j = 0; j < d; ++j) {
          if (y[j] != 0) {
            EXPECT_EQ(y[j], x[j]);
            ++sent;
            smallest_kept = std::min(smallest_kept, std::fabs(x[j]));
          } else {
            largest_dropped = std::max(largest_dropped, std::fabs(x[j]));
          }
        }
        EXPECT_GE(smallest_kept, largest_dropped);
        if (r.stats.threshold_fallbacks > 0) {
          EXPECT_EQ(sent, k);
        } else {
          EXPECT_GE(2 * sent, k);
          EXPECT_LE(sent, 2 * k);
        }
        // 4-byte count, then c values and c indices of ⌈log2 d⌉ bits.
        uint64_t bits = 0;
        while ((uint64_t{1} << bits) < d) ++bits;
        EXPECT_EQ(r.stats.wire_bytes, 4 + (sent * (32 + bits) + 7) / 8);
      }
    }
  }
}

TEST(TopK, SampledThresholdFallsBackWhenEverythingTies) {
  // All magnitudes equal: any threshold passes all d = 400 values, more than 2k = 8, so the exact top-4 is
  // sent (ties broken by the lower index).
  gpu::CpuOps<double> ops;
  CompressionSettings s = settings_for(CompressorKind::TopK);
  s.ratio = 0.01;
  s.sampled_threshold = true;
  Compressor<double> c(ops, one_vector(400), 400, s, 0);
  Vec x(400, -1.5);
  const CompressionResult r = c.compress(x.data(), 0);
  EXPECT_EQ(r.stats.threshold_fallbacks, 1u);
  for (size_t j = 0; j < 400; ++j) EXPECT_EQ(x[j], j < 4 ? -1.5 : 0.0) << j;
}

// Random-k with d/k scaling: each coordinate is kept with probability k/d, so the estimator of x_j has mean x_j
// and variance x_j²(d/k − 1). Over n independent steps the sample mean is within 5 standard errors.
TEST(RandomK, ScaledIsUnbiased) {
  gpu::CpuOps<double> ops;
  const size_t d = 10;
  CompressionSettings s = settings_for(CompressorKind::RandomK);
  s.ratio = 0.3;  // k = 3
  s.unbiased = true;
  s.seed = 42;
  Compressor<double> c(ops, one_vector(d), d, s, 0);
  const Vec x = {1.0, -2.0, 0.5, 3.0, -0.25, 4.0, -1.5, 2.5, 0.75, -3.5};
  const int n = 20000;
  Vec sum(d, 0.0);
  std::vector<int> chosen(d, 0);
  for (int step = 0; step < n; ++step) {
    Vec y = x;
    c.compress(y.data(), step);
    int kept = 0;
    for (size_t j = 0; j < d; ++j) {
      sum[j] += y[j];
      if (y[j] != 0) {
        ++kept;
        ++chosen[j];
        EXPECT_NEAR(y[j], x[j] * d / 3.0, 1e-12);
      }
    }
    ASSERT_EQ(kept, 3);
  }
  const double p = 0.3;
  for (size_t j = 0; j < d; ++j) {
    const double standard_error = std::sqrt(x[j] * x[j] * (1 / p - 1) / n);
    EXPECT_NEAR(sum[j] / n, x[j], 5 * standard_error) << j;
    // Inclusion is Bernoulli(k/d): its frequency within 5 binomial standard errors.
    EXPECT_NEAR(chosen[j] / static_cast<double>(n), p, 5 * std::sqrt(p * (1 - p) / n)) << j;
  }
}

TEST(RandomK, UnscaledKeepsTheValues) {
  gpu::CpuOps<double> ops;
  CompressionSettings s = settings_for(CompressorKind::RandomK);
  s.ratio = 0.5;
  Compressor<double> c(ops, one_vector(6), 6, s, 0);
  const Vec x = {1, 2, 3, 4, 5, 6};
  Vec y = x;
  c.compress(y.data(), 0);
  int kept = 0;
  for (size_t j = 0; j < 6; ++j)
    if (y[j] != 0) {
      ++kept;
      EXPECT_EQ(y[j], x[j]);
    }
  EXPECT_EQ(kept, 3);
}

// QSGD: per coordinate, with c = ‖v‖/s and p_j = frac(s|v_j|/‖v‖), the decoded value is sign·c·(⌊·⌋ + B_j),
// B_j ~ Bernoulli(p_j) independent. Mean v_j, variance c² p_j(1 − p_j). The squared error ‖Q(v) − v‖² is
// Σ_j c²(B_j − p_j)², with mean Σ c² p_j(1 − p_j) and variance Σ c⁴ [p(1−p)⁴ + (1−p)p⁴ − p²(1−p)²].
struct QsgdMoments {
  Vec mean_variance;  // per coordinate
  double error_mean = 0, error_variance = 0;
};

QsgdMoments qsgd_moments(const Vec& v, size_t begin, size_t end, double s, QsgdMoments m) {
  double norm = 0;
  for (size_t j = begin; j < end; ++j) norm += v[j] * v[j];
  norm = std::sqrt(norm);
  const double c = norm / s;
  for (size_t j = begin; j < end; ++j) {
    const double r = s * std::fabs(v[j]) / norm;
    const double p = r - std::floor(r);
    m.mean_variance[j] = c * c * p * (1 - p);
    m.error_mean += c * c * p * (1 - p);
    m.error_variance +=
        std::pow(c, 4) * (p * std::pow(1 - p, 4) + (1 - p) * std::pow(p, 4) - p * p * (1 - p) * (1 - p));
  }
  return m;
}

void check_qsgd(const Vec& v, int levels, size_t bucket) {
  gpu::CpuOps<double> ops;
  const size_t d = v.size();
  CompressionSettings s = settings_for(CompressorKind::Qsgd);
  s.qsgd_levels = levels;
  s.qsgd_bucket = bucket;
  s.seed = 9;
  Compressor<double> c(ops, one_vector(d), d, s, 2);
  QsgdMoments m;
  m.mean_variance.assign(d, 0);
  const size_t width = bucket == 0 ? d : bucket;
  for (size_t b = 0; b < d; b += width) m = qsgd_moments(v, b, std::min(d, b + width), levels, m);
  const int n = 20000;
  Vec sum(d, 0);
  double error_sum = 0;
  for (int step = 0; step < n; ++step) {
    Vec y = v;
    c.compress(y.data(), step);
    for (size_t j = 0; j < d; ++j) sum[j] += y[j];
    error_sum += squared_distance(y, v);
  }
  // A value alone in its bucket has r = s exactly and no randomness: only the summation's rounding remains.
  for (size_t j = 0; j < d; ++j)
    EXPECT_NEAR(sum[j] / n, v[j], 5 * std::sqrt(m.mean_variance[j] / n) + 1e-10 * std::fabs(v[j]))
        << "coordinate " << j;
  EXPECT_NEAR(error_sum / n, m.error_mean, 5 * std::sqrt(m.error_variance / n));
  if (bucket == 0) {
    // Lemma 3.1: E‖Q(v) − v‖² ≤ min(d/s², √d/s) ‖v‖², for the closed form and the sample.
    const double bound = std::min(d / double(levels * levels), std::sqrt(double(d)) / levels) * sum_squares(v);
    EXPECT_LE(m.error_mean, bound);
    EXPECT_LE(error_sum / n, bound + 5 * std::sqrt(m.error_variance / n));
  }
}

TEST(Qsgd, IsUnbiasedWithTheClosedFormVariance) {
  const Vec v = test_vector(16, 0, 21);
  check_qsgd(v, 1, 0);
  check_qsgd(v, 2, 0);
  check_qsgd(v, 7, 0);
  check_qsgd(v, 4, 5);  // buckets of 5, 5, 5, 1 values, each with its norm
  check_qsgd(test_vector(64, 1, 3), 3, 0);
}

TEST(Qsgd, DecodesToMultiplesOfTheBucketNorm) {
  gpu::CpuOps<double> ops;
  CompressionSettings s = settings_for(CompressorKind::Qsgd);
  s.qsgd_levels = 4;
  Compressor<double> c(ops, one_vector(3), 3, s, 0);
  Vec y = {3, -4, 0};  // ‖v‖ = 5: levels of 5/4; r = (2.4, 3.2, 0)
  c.compress(y.data(), 0);
  EXPECT_TRUE(y[0] == 2 * 1.25 || y[0] == 3 * 1.25) << y[0];
  EXPECT_TRUE(y[1] == -3 * 1.25 || y[1] == -4 * 1.25) << y[1];
  EXPECT_EQ(y[2], 0.0);
  Vec zero = {0, 0, 0};
  c.compress(zero.data(), 1);
  EXPECT_EQ(zero, Vec(3, 0.0));
}

TEST(Sign, DecodesSignsAndScaledSigns) {
  gpu::CpuOps<double> ops;
  const Vec x = {0.5, -2, 0, 3.5};
  Compressor<double> sign(ops, one_vector(4), 4, settings_for(CompressorKind::Sign), 0);
  Vec y = x;
  sign.compress(y.data(), 0);
  EXPECT_EQ(y, (Vec{1, -1, 1, 1}));  // a bit has no zero: sign(0) = +1
  Compressor<double> scaled(ops, one_vector(4), 4, settings_for(CompressorKind::ScaledSign), 0);
  y = x;
  scaled.compress(y.data(), 0);
  const double l1 = (0.5 + 2 + 0 + 3.5) / 4;  // ‖x‖₁/d = 1.5
  EXPECT_EQ(y, (Vec{l1, -l1, l1, l1}));
}

TEST(Sign, SignOfZeroZeroSendsZeroAsZero) {
  // The papers' sign(0) = 0; −0 is zero too, and NaN still goes out as −1 (it compares false both ways).
  gpu::CpuOps<double> ops;
  const Vec x = {0.5, -2, 0, 3.5, -0.0, std::nan("")};
  CompressionSettings s = settings_for(CompressorKind::Sign);
  s.sign_of_zero = SignOfZero::Zero;
  Compressor<double> sign(ops, one_vector(6), 6, s, 0);
  Vec y = x;
  sign.compress(y.data(), 0);
  EXPECT_EQ(y, (Vec{1, -1, 0, 1, 0, -1}));
  s.kind = CompressorKind::ScaledSign;
  Compressor<double> scaled(ops, one_vector(4), 4, s, 0);
  y = {0.5, -2, 0, 3.5};
  scaled.compress(y.data(), 0);
  const double l1 = 1.5;  // ‖x‖₁/d counts the zero in d: (0.5 + 2 + 0 + 3.5) / 4
  EXPECT_EQ(y, (Vec{l1, -l1, 0, l1}));
  // The wire is charged one bit per value either way: the same bytes as plus.
  Compressor<double> plus(ops, one_vector(4), 4, settings_for(CompressorKind::ScaledSign), 0);
  Vec z = {0, 0, 1, 0};
  EXPECT_EQ(scaled.compress(z.data(), 1).stats.wire_bytes, plus.compress(z.data(), 1).stats.wire_bytes);
}

// With error feedback a zero sent as +scale leaves −scale behind (so the next step pulls back); sent as 0 it
// leaves nothing. Two steps of a zero gradient on value 2 against the closed form.
TEST(Sign, SignOfZeroDecidesWhatErrorFeedbackKeeps) {
  gpu::CpuOps<double> ops;
  for (const SignOfZero zero : {SignOfZero::Plus, SignOfZero::Zero}) {
    CompressionSettings s = settings_for(CompressorKind::ScaledSign);
    s.error_feedback = true;
    s.sign_of_zero = zero;
    Compressor<double> c(ops, one_vector(3), 3, s, 0);
    Vec g = {3, -3, 0};  // scale 2: sent (2, −2, 2 or 0), residual (1, −1, −2 or 0)
    c.compress(g.data(), 0);
    EXPECT_EQ(g, (Vec{2, -2, zero == SignOfZero::Plus ? 2.0 : 0.0}));
    g = {0, 0, 0};  // corrected input = the residual: plus (1, −1, −2), scale 4/3; zero (1, −1, 0), scale 2/3
    c.compress(g.data(), 1);
    if (zero == SignOfZero::Plus) {
      EXPECT_EQ(g, (Vec{4.0 / 3, -4.0 / 3, -4.0 / 3}));
    } else {
      EXPECT_EQ(g, (Vec{2.0 / 3, -2.0 / 3, 0}));
    }
  }
}

TEST(Sign, SignumSendsTheSignOfTheMomentum) {
  // β = 0.5: m1 = 0.5·g1 = (0.5, −0.5); m2 = 0.5·m1 + 0.5·g2 = (0.25 − 1.5, −0.25 + 0.05) = (−1.25, −0.2);
  // m3 = 0.5·m2 + 0.5·g3 = (−0.625 + 1, −0.1 + 0.5) = (0.375, 0.4).
  gpu::CpuOps<double> ops;
  CompressionSettings s = settings_for(CompressorKind::Signum);
  s.signum_momentum = 0.5;
  Compressor<double> c(ops, one_vector(2), 2, s, 0);
  Vec g = {1, -1};
  c.compress(g.data(), 0);
  EXPECT_EQ(g, (Vec{1, -1}));
  g = {-3, 0.1};
  c.compress(g.data(), 1);
  EXPECT_EQ(g, (Vec{-1, -1}));
  g = {2, 1};
  c.compress(g.data(), 2);
  EXPECT_EQ(g, (Vec{1, 1}));
}

TEST(Casts, RoundToTheNarrowFormat) {
  gpu::CpuOps<double> ops;
  // fp16: 10 mantissa bits, so values near 1 are 2^-10 apart; largest finite 65504; smallest subnormal 2^-24.
  Compressor<double> fp16(ops, one_vector(3), 3, settings_for(CompressorKind::Fp16), 0);
  Vec y = {1 + std::ldexp(1, -12), 70000, std::ldexp(1, -25)};
  fp16.compress(y.data(), 0);
  EXPECT_EQ(y[0], 1.0);           // a quarter of a unit: down
  EXPECT_TRUE(std::isinf(y[1]));  // overflow
  EXPECT_EQ(y[2], 0.0);           // half the smallest subnormal: a tie, to even (zero)
  // bf16: 7 mantissa bits, values near 1 are 2^-7 apart.
  Compressor<double> bf16(ops, one_vector(2), 2, settings_for(CompressorKind::Bf16), 0);
  y = {1 + std::ldexp(1, -8), 1 + 3 * std::ldexp(1, -9)};
  bf16.compress(y.data(), 0);
  EXPECT_EQ(y[0], 1.0);                    // half a unit: a tie, to even (1)
  EXPECT_EQ(y[1], 1 + std::ldexp(1, -7));  // three quarters of a unit: up
}

}  // namespace
}  // namespace dtsim::models
