// PowerSGD against what the algorithm must do whatever its random start: exact reconstruction of matrices whose
// rank is within r, the decode being an orthogonal projection of M (P̂ P̂ᵀ M), power iteration through the warm
// start converging to the best rank-r approximation, and the group form agreeing with the single-matrix
// algorithm when every worker holds the same gradient.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/compression/compression.hpp"
#include "models/random.hpp"

namespace dtsim::models {
namespace {

using Vec = std::vector<double>;

CompressionSettings powersgd(int rank) {
  CompressionSettings s;
  s.kind = CompressorKind::PowerSgd;
  s.powersgd_rank = rank;
  return s;
}

std::vector<TensorLayout> matrix_layout(size_t m, size_t n) { return {{{"w", 0, m * n, false}, m, n}}; }

Vec random_matrix(size_t m, size_t n, uint64_t seed) {
  Rng rng(seed, "powersgd-test");
  Vec x(m * n);
  for (double& v : x) v = rng.normal();
  return x;
}

// A Bᵀ with A (m × r) and B (n × r) Gaussian: rank r.
Vec low_rank_matrix(size_t m, size_t n, size_t r, uint64_t seed) {
  const Vec a = random_matrix(m, r, seed), b = random_matrix(n, r, seed + 1);
  Vec x(m * n, 0.0);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j)
      for (size_t k = 0; k < r; ++k) x[i * n + j] += a[i * r + k] * b[j * r + k];
  return x;
}

double max_abs_difference(const Vec& a, const Vec& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

TEST(PowerSgd, FullRankReconstructsExactly) {
  gpu::CpuOps<double> ops;
  for (const auto& [m, n] : {std::pair<size_t, size_t>{5, 3}, {3, 5}, {4, 4}, {1, 6}, {7, 1}}) {
    Compressor<double> c(ops, matrix_layout(m, n), m * n, powersgd(static_cast<int>(std::min(m, n))), 0);
    for (int step = 0; step < 3; ++step) {
      const Vec x = random_matrix(m, n, 10 + step);
      Vec y = x;
      c.compress(y.data(), step);
      EXPECT_LT(max_abs_difference(x, y), 1e-12) << m << " x " << n << " step " << step;
    }
  }
  // A rank above min(m, n) is clamped to it.
  Compressor<double> c(ops, matrix_layout(3, 4), 12, powersgd(10), 0);
  const Vec x = random_matrix(3, 4, 1);
  Vec y = x;
  const CompressionResult r = c.compress(y.data(), 0);
  EXPECT_LT(max_abs_difference(x, y), 1e-12);
  EXPECT_EQ(r.wire[0].bytes_per_worker, 4u * (3 + 4) * 3);  // P̂ 3 × 3 and Q 4 × 3 at 4 bytes
}

TEST(PowerSgd, FullRankReconstructsInFloatToFloatTolerance) {
  gpu::CpuOps<float> ops;
  Compressor<float> c(ops, matrix_layout(6, 4), 24, powersgd(4), 0);
  const Vec x = random_matrix(6, 4, 3);
  std::vector<float> y(x.begin(), x.end());
  c.compress(y.data(), 0);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], x[i], 1e-4) << i;
}

TEST(PowerSgd, RankRMatricesReconstructExactlyAtRankR) {
  gpu::CpuOps<double> ops;
  for (const size_t r : {1u, 2u, 3u}) {
    const size_t m = 9, n = 7;
    Compressor<double> c(ops, matrix_layout(m, n), m * n, powersgd(static_cast<int>(r)), 0);
    const Vec x = low_rank_matrix(m, n, r, 40 + r);
    Vec y = x;
    c.compress(y.data(), 0);
    EXPECT_LT(max_abs_difference(x, y), 1e-11) << "rank " << r;
  }
}

// D = P̂ P̂ᵀ M with P̂ orthonormal: Dᵀ(M − D) = Mᵀ P̂ P̂ᵀ (I − P̂ P̂ᵀ) M = 0, and ‖D‖ ≤ ‖M‖ (Frobenius).
TEST(PowerSgd, DecodeIsAnOrthogonalProjectionOfTheMatrix) {
  gpu::CpuOps<double> ops;
  const size_t m = 6, n = 5;
  Compressor<double> c(ops, matrix_layout(m, n), m * n, powersgd(2), 0);
  for (int step = 0; step < 4; ++step) {
    const Vec x = random_matrix(m, n, 70 + step);
    Vec d = x;
    c.compress(d.data(), step);
    double norm_d = 0, norm_x = 0;
    for (size_t i = 0; i < m * n; ++i) norm_d += d[i] * d[i], norm_x += x[i] * x[i];
    EXPECT_LE(norm_d, norm_x * (1 + 1e-12));
    for (size_t a = 0; a < n; ++a)
      for (size_t b = 0; b < n; ++b) {
        double g = 0;  // (Dᵀ (M − D))[a][b]
        for (size_t i = 0; i < m; ++i) g += d[i * n + a] * (x[i * n + b] - d[i * n + b]);
        EXPECT_NEAR(g, 0.0, 1e-12) << a << ", " << b;
      }
  }
}

// With the same matrix every step the warm start makes PowerSGD a power iteration: M = diag(3, 1, 0.5) padded
// to 4 × 3 has the best rank-1 approximation 3·e1 e1ᵀ, approached by a factor (1/3)² per step.
TEST(PowerSgd, WarmStartConvergesToTheBestRankRApproximation) {
  gpu::CpuOps<double> ops;
  Compressor<double> c(ops, matrix_layout(4, 3), 12, powersgd(1), 0);
  const Vec m = {3, 0, 0, 0, 1, 0, 0, 0, 0.5, 0, 0, 0};
  Vec best(12, 0.0);
  best[0] = 3;
  Vec d;
  for (int step = 0; step < 40; ++step) {
    d = m;
    c.compress(d.data(), step);
  }
  EXPECT_LT(max_abs_difference(d, best), 1e-12);
}

TEST(PowerSgd, GroupEqualsTheSingleMatrixAlgorithmOnTheMeanWhenWorkersAgree) {
  gpu::CpuOps<double> ops;
  // A 5 × 4 weight and a 4-value bias (left uncompressed).
  const std::vector<TensorLayout> layouts = {{{"w", 0, 20, false}, 5, 4}, {{"b", 20, 4, true}, 0, 0}};
  CompressionSettings s = powersgd(2);
  s.error_feedback = true;
  GroupCompressor<double> group(ops, layouts, 24, s, 3);
  Compressor<double> single(ops, layouts, 24, s, 0);
  for (int step = 0; step < 5; ++step) {
    const Vec g = random_matrix(24, 1, 100 + step);
    std::vector<Vec> grads(3, g);
    std::vector<double*> pointers;
    for (Vec& w : grads) pointers.push_back(w.data());
    Vec mean(24);
    const GroupResult r = group.average(pointers, step, mean.data());
    Vec expected = g;
    single.compress(expected.data(), step);
    EXPECT_LT(max_abs_difference(mean, expected), 1e-12) << "step " << step;
    // Two allreduces for the matrix (P: 5 × 2, Q: 4 × 2 at 4 bytes), one for the bias.
    ASSERT_EQ(r.wire.size(), 3u);
    EXPECT_EQ(r.wire[0].bytes_per_worker, 4u * 5 * 2);
    EXPECT_EQ(r.wire[1].bytes_per_worker, 4u * 4 * 2);
    EXPECT_EQ(r.wire[2].bytes_per_worker, 4u * 4);
    for (const WireOp& op : r.wire) EXPECT_EQ(op.collective, Collective::Allreduce);
  }
}

// At full rank the group's P̄ = M̄ Q spans the column space of the mean, so the decode is the exact mean even
// when the workers' matrices differ.
TEST(PowerSgd, GroupAtFullRankDecodesTheExactMean) {
  gpu::CpuOps<double> ops;
  GroupCompressor<double> group(ops, matrix_layout(4, 3), 12, powersgd(3), 3);
  std::vector<Vec> grads;
  std::vector<double*> pointers;
  Vec exact(12, 0.0);
  for (int w = 0; w < 3; ++w) grads.push_back(random_matrix(4, 3, 200 + w));
  for (Vec& g : grads) {
    pointers.push_back(g.data());
    for (size_t i = 0; i < 12; ++i) exact[i] += g[i] / 3;
  }
  Vec mean(12);
  group.average(pointers, 0, mean.data());
  EXPECT_LT(max_abs_difference(mean, exact), 1e-12);
}

}  // namespace
}  // namespace dtsim::models
