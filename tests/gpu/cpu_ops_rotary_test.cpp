// Rotary position embedding of the CPU reference backend against the contract's closed form (pair m of the token at
// position t turns by t · base^(−2m/head_dim)), the property it exists for (a query and a key score by their offset
// alone), the inverse as the gradient (central differences in double) and its input checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "tests/gpu/finite_differences.hpp"

namespace dtsim::gpu {
namespace {

using finite_differences::numeric_gradient;
using finite_differences::random_vector;
using finite_differences::relative_error;
using finite_differences::weighted_sum;

AttentionShape rotary_shape(int batch, int seq, int heads, int head_dim) {
  AttentionShape s;
  s.batch = batch, s.seq = seq, s.heads = heads, s.head_dim = head_dim;
  return s;
}

size_t at(const AttentionShape& s, int b, int t, int h, int d) {
  return (static_cast<size_t>(b) * s.seq + t) * s.dim() + static_cast<size_t>(h) * s.head_dim + d;
}

TEST(CpuOpsRotary, TurnsEachPairByPositionTimesItsFrequency) {
  const AttentionShape s = rotary_shape(2, 5, 2, 4);
  const double base = 100.0;
  const std::vector<double> x = random_vector(static_cast<size_t>(2) * 5 * 8, 3);
  std::vector<double> y = x;
  CpuOps<double> ops;
  ops.rotary_embedding(s, y.data(), base, false);
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 5; ++t)
      for (int h = 0; h < 2; ++h) {
        // head_dim 4: pair 0 turns by t, pair 1 by t / sqrt(base) (base^(−2/4)).
        const double angles[2] = {1.0 * t, t / std::sqrt(base)};
        for (int m = 0; m < 2; ++m) {
          const double x0 = x[at(s, b, t, h, 2 * m)], x1 = x[at(s, b, t, h, 2 * m + 1)];
          EXPECT_NEAR(y[at(s, b, t, h, 2 * m)], x0 * std::cos(angles[m]) - x1 * std::sin(angles[m]), 1e-14);
          EXPECT_NEAR(y[at(s, b, t, h, 2 * m + 1)], x0 * std::sin(angles[m]) + x1 * std::cos(angles[m]), 1e-14);
        }
      }
  // Position 0 of every sequence is not turned at all.
  for (int b = 0; b < 2; ++b)
    for (int d = 0; d < 8; ++d) EXPECT_EQ(y[at(s, b, 0, 0, d)], x[at(s, b, 0, 0, d)]);
}

TEST(CpuOpsRotary, ScoresDependOnlyOnTheOffsetBetweenQueryAndKey) {
  // The same query content at every position and the same key content at every position: after rotation the dot
  // product of query i and key j is a function of i − j (per head), which is what rotary embeddings are for.
  const int seq = 9, heads = 2, hd = 6;
  const AttentionShape s = rotary_shape(1, seq, heads, hd);
  const std::vector<double> q_content = random_vector(heads * hd, 11), k_content = random_vector(heads * hd, 12);
  std::vector<double> q(static_cast<size_t>(seq) * heads * hd), k(q.size());
  for (int t = 0; t < seq; ++t)
    for (int c = 0; c < heads * hd; ++c) q[t * heads * hd + c] = q_content[c], k[t * heads * hd + c] = k_content[c];
  CpuOps<double> ops;
  ops.rotary_embedding(s, q.data(), 10000.0, false);
  ops.rotary_embedding(s, k.data(), 10000.0, false);
  auto score = [&](int i, int j, int h) {
    double sum = 0;
    for (int d = 0; d < hd; ++d) sum += q[at(s, 0, i, h, d)] * k[at(s, 0, j, h, d)];
    return sum;
  };
  for (int h = 0; h < heads; ++h) {
    for (int offset = -3; offset <= 3; ++offset) {
      const double first = score(3, 3 - offset, h);
      for (int i = 0; i < seq; ++i) {
        const int j = i - offset;
        if (j < 0 || j >= seq) continue;
        EXPECT_NEAR(score(i, j, h), first, 1e-12) << "head " << h << " offset " << offset << " query " << i;
      }
    }
    // ... and it does depend on the offset (the content is random, so offsets 0 and 1 differ).
    EXPECT_GT(std::abs(score(4, 4, h) - score(4, 3, h)), 1e-6);
  }
}

TEST(CpuOpsRotary, InverseUndoesTheRotationAndNormsArePreserved) {
  const AttentionShape s = rotary_shape(3, 7, 2, 8);
  const std::vector<double> x = random_vector(static_cast<size_t>(3) * 7 * 16, 21);
  std::vector<double> y = x;
  CpuOps<double> ops;
  ops.rotary_embedding(s, y.data(), 10000.0, false);
  for (size_t i = 0; i + 1 < x.size(); i += 2) {
    EXPECT_NEAR(y[i] * y[i] + y[i + 1] * y[i + 1], x[i] * x[i] + x[i + 1] * x[i + 1], 1e-13);
  }
  EXPECT_GT(relative_error(x, y), 1e-2);  // it did turn something
  ops.rotary_embedding(s, y.data(), 10000.0, true);
  EXPECT_LT(relative_error(x, y), 1e-14);
}

TEST(CpuOpsRotary, InverseRotationOfTheOutputGradientIsTheInputGradient) {
  const AttentionShape s = rotary_shape(2, 6, 2, 4);
  std::vector<double> x = random_vector(static_cast<size_t>(2) * 6 * 8, 31);
  const std::vector<double> weights = random_vector(x.size(), 32);
  CpuOps<double> ops;
  const auto loss = [&] {
    std::vector<double> y = x;
    ops.rotary_embedding(s, y.data(), 50.0, false);
    return weighted_sum(y, weights);
  };
  const std::vector<double> numeric = numeric_gradient(x, loss);
  std::vector<double> analytic = weights;  // dL/dy
  ops.rotary_embedding(s, analytic.data(), 50.0, true);
  EXPECT_LT(relative_error(analytic, numeric), 1e-8);
}

TEST(CpuOpsRotary, FloatAgreesWithDouble) {
  const AttentionShape s = rotary_shape(2, 16, 4, 8);
  const std::vector<double> x = random_vector(static_cast<size_t>(2) * 16 * 32, 41, -3, 3);
  std::vector<double> yd = x;
  std::vector<float> yf(x.begin(), x.end());
  CpuOps<double>().rotary_embedding(s, yd.data(), 10000.0, false);
  CpuOps<float>().rotary_embedding(s, yf.data(), 10000.0, false);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(yf[i], yd[i], 1e-5) << i;
}

TEST(CpuOpsRotary, RejectsAnOddHeadWidthAndABadBase) {
  std::vector<float> x(2 * 3 * 3, 1.0f);
  CpuOps<float> ops;
  EXPECT_THROW(ops.rotary_embedding(rotary_shape(2, 3, 1, 3), x.data(), 10000.0, false), std::invalid_argument);
  EXPECT_THROW(ops.rotary_embedding(rotary_shape(1, 3, 1, 2), x.data(), 1.0, false), std::invalid_argument);
  EXPECT_THROW(ops.rotary_embedding(rotary_shape(1, 3, 1, 2), x.data(), std::nan(""), false), std::invalid_argument);
  EXPECT_THROW(ops.rotary_embedding(rotary_shape(1, 0, 1, 2), x.data(), 10000.0, false), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::gpu
