// The CPU reference backend against naive loops and closed forms.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "gpu/cpu_ops.hpp"

namespace dtsim::gpu {
namespace {

std::vector<double> random_vector(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

// c[i][j] = Σ_k A(i,k) B(k,j) with A, B read through optional transposes, in plain loops.
std::vector<double> naive_gemm(bool ta, bool tb, const std::vector<double>& a, int a_rows, int a_cols,
                               const std::vector<double>& b, int b_rows, int b_cols) {
  const int m = ta ? a_cols : a_rows, k = ta ? a_rows : a_cols, n = tb ? b_rows : b_cols;
  std::vector<double> c(static_cast<size_t>(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p) {
        const double av = ta ? a[p * a_cols + i] : a[i * a_cols + p];
        const double bv = tb ? b[j * b_cols + p] : b[p * b_cols + j];
        c[i * n + j] += av * bv;
      }
  return c;
}

class GemmTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(GemmTest, MatchesNaiveLoopsWithAlphaAndBeta) {
  const auto [ta, tb] = GetParam();
  const int m = 7, k = 5, n = 3;
  const int a_rows = ta ? k : m, a_cols = ta ? m : k;
  const int b_rows = tb ? n : k, b_cols = tb ? k : n;
  const auto a = random_vector(a_rows * a_cols, 1);
  const auto b = random_vector(b_rows * b_cols, 2);
  auto c = random_vector(m * n, 3);
  const auto c0 = c;
  CpuOps<double> ops;
  ops.gemm(ta ? Transpose::Yes : Transpose::No, tb ? Transpose::Yes : Transpose::No, 0.5, {a.data(), a_rows, a_cols},
           {b.data(), b_rows, b_cols}, 2.0, MatrixView<double>{c.data(), m, n});
  const auto expected = naive_gemm(ta, tb, a, a_rows, a_cols, b, b_rows, b_cols);
  for (size_t i = 0; i < c.size(); ++i) EXPECT_NEAR(c[i], 0.5 * expected[i] + 2.0 * c0[i], 1e-12) << i;
}

INSTANTIATE_TEST_SUITE_P(AllTransposes, GemmTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()));

TEST(CpuOps, GemmWithZeroBetaIgnoresGarbageInOutput) {
  CpuOps<float> ops;
  const std::vector<float> a{1, 2, 3, 4}, b{1, 0, 0, 1};
  std::vector<float> c(4, std::nanf(""));
  ops.gemm(Transpose::No, Transpose::No, 1.0f, {a.data(), 2, 2}, {b.data(), 2, 2}, 0.0f, {c.data(), 2, 2});
  EXPECT_EQ(c, a);
}

TEST(CpuOps, GemmRejectsMismatchedShapes) {
  CpuOps<float> ops;
  std::vector<float> a(6), b(6), c(4);
  EXPECT_THROW(ops.gemm(Transpose::No, Transpose::No, 1.0f, {a.data(), 2, 3}, {b.data(), 2, 3}, 0.0f, {c.data(), 2, 2}),
               std::invalid_argument);
}

TEST(CpuOps, RowVectorAndColumnSums) {
  CpuOps<double> ops;
  std::vector<double> y{1, 2, 3, 4, 5, 6};  // 2 × 3
  const std::vector<double> bias{10, 20, 30};
  ops.add_row_vector({y.data(), 2, 3}, bias.data());
  EXPECT_EQ(y, (std::vector<double>{11, 22, 33, 14, 25, 36}));
  std::vector<double> sums{1, 1, 1};
  ops.column_sums({y.data(), 2, 3}, 1.0, sums.data());
  EXPECT_EQ(sums, (std::vector<double>{26, 48, 70}));
  ops.column_sums({y.data(), 2, 3}, 0.0, sums.data());
  EXPECT_EQ(sums, (std::vector<double>{25, 47, 69}));
}

TEST(CpuOps, ElementwiseOpsAndReductions) {
  CpuOps<double> ops;
  std::vector<double> x{-2, -0.5, 0, 0.5, 3};
  std::vector<double> y(5), dx(5);
  const std::vector<double> dy{1, 2, 3, 4, 5};
  ops.relu_forward(x.data(), y.data(), 5);
  EXPECT_EQ(y, (std::vector<double>{0, 0, 0, 0.5, 3}));
  ops.relu_backward(y.data(), dy.data(), dx.data(), 5);
  EXPECT_EQ(dx, (std::vector<double>{0, 0, 0, 4, 5}));
  EXPECT_DOUBLE_EQ(ops.sum_squares(x.data(), 5), 4 + 0.25 + 0 + 0.25 + 9);
  ops.axpy(2.0, dy.data(), x.data(), 5);
  EXPECT_EQ(x, (std::vector<double>{0, 3.5, 6, 8.5, 13}));
  ops.scale(0.5, x.data(), 5);
  EXPECT_EQ(x, (std::vector<double>{0, 1.75, 3, 4.25, 6.5}));
}

TEST(CpuOps, SoftmaxCrossEntropyMatchesClosedForm) {
  CpuOps<double> ops;
  const std::vector<double> logits{1.0, 2.0, 0.5, -1.0, 0.0, 3.0};  // 2 rows × 3 classes
  const std::vector<int32_t> labels{1, 0};
  std::vector<double> d(6);
  const LossSums sums = ops.softmax_cross_entropy({logits.data(), 2, 3}, labels.data(), d.data(), 0.5);
  double expected_loss = 0.0;
  for (int r = 0; r < 2; ++r) {
    const double* z = &logits[r * 3];
    const double denom = std::exp(z[0]) + std::exp(z[1]) + std::exp(z[2]);
    expected_loss += -std::log(std::exp(z[labels[r]]) / denom);
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(d[r * 3 + j], 0.5 * (std::exp(z[j]) / denom - (j == labels[r] ? 1.0 : 0.0)), 1e-14);
  }
  EXPECT_NEAR(sums.loss, expected_loss, 1e-12);
  EXPECT_EQ(sums.correct, 1);  // row 0 predicts class 1 (right), row 1 predicts class 2 (wrong)
}

TEST(CpuOps, SoftmaxCrossEntropyIsStableForHugeLogits) {
  CpuOps<float> ops;
  const std::vector<float> logits{1000.0f, 0.0f, -1000.0f};
  const int32_t label = 0;
  std::vector<float> d(3);
  const LossSums sums = ops.softmax_cross_entropy({logits.data(), 1, 3}, &label, d.data(), 1.0f);
  EXPECT_NEAR(sums.loss, 0.0, 1e-6);
  for (const float v : d) EXPECT_TRUE(std::isfinite(v));
}

TEST(CpuOps, SoftmaxCrossEntropyRejectsLabelsOutOfRange) {
  CpuOps<float> ops;
  const std::vector<float> logits{0, 0};
  const int32_t label = 2;
  EXPECT_THROW(ops.softmax_cross_entropy({logits.data(), 1, 2}, &label, nullptr, 1.0f), std::invalid_argument);
}

TEST(CpuOps, SgdMomentumFollowsTorchSemantics) {
  // Two steps by hand: g' = g + wd·w, v = μv + g', w -= lr·v (heavy ball) or lr·(g' + μv) (Nesterov).
  for (const bool nesterov : {false, true}) {
    CpuOps<double> ops;
    std::vector<double> w{1.0, -2.0}, v{0.0, 0.0};
    const std::vector<double> g{0.5, 0.25};
    const double lr = 0.1, mu = 0.9, wd = 0.01;
    double ew[2] = {1.0, -2.0}, ev[2] = {0.0, 0.0};
    for (int step = 0; step < 2; ++step) {
      ops.sgd_momentum_update(w.data(), g.data(), v.data(), 2, lr, mu, wd, nesterov);
      for (int i = 0; i < 2; ++i) {
        const double gi = g[i] + wd * ew[i];
        ev[i] = mu * ev[i] + gi;
        ew[i] -= lr * (nesterov ? gi + mu * ev[i] : ev[i]);
      }
    }
    for (int i = 0; i < 2; ++i) {
      EXPECT_DOUBLE_EQ(w[i], ew[i]);
      EXPECT_DOUBLE_EQ(v[i], ev[i]);
    }
  }
}

TEST(CpuOps, MemoryRoundTrip) {
  CpuOps<float> ops;
  float* p = ops.allocate(5);
  const std::vector<float> src{1, 2, 3, 4, 5};
  ops.upload(p, src.data(), 5);
  std::vector<float> back(5);
  ops.download(back.data(), p, 5);
  EXPECT_EQ(back, src);
  ops.fill(p, 5, 7.0f);
  ops.download(back.data(), p, 5);
  EXPECT_EQ(back, std::vector<float>(5, 7.0f));
  ops.release(p);
}

}  // namespace
}  // namespace dtsim::gpu

namespace dtsim::gpu {
namespace {

TEST(CpuOps, ReductionsInDouble) {
  CpuOps<float> ops;
  const std::vector<float> x{1.5f, -2.0f, 3.0f}, y{2.0f, 0.5f, -1.0f};
  EXPECT_DOUBLE_EQ(ops.sum(x.data(), 3), 2.5);
  EXPECT_DOUBLE_EQ(ops.dot(x.data(), y.data(), 3), 3.0 - 1.0 - 3.0);
  // 1e8 + 1 + 1 − 1e8 is 2 in double; a float accumulator would return 0.
  const std::vector<float> big{1e8f, 1.0f, 1.0f, -1e8f};
  EXPECT_DOUBLE_EQ(ops.sum(big.data(), 4), 2.0);
  const std::vector<float> bad{1.0f, std::nanf(""), INFINITY, -INFINITY, 0.0f};
  EXPECT_EQ(ops.count_nonfinite(bad.data(), bad.size()), 3u);
}

TEST(CpuOps, GeluAndTanhMatchClosedFormsAndDerivatives) {
  CpuOps<double> ops;
  const std::vector<double> x{-3.0, -1.0, -0.1, 0.0, 0.2, 1.0, 2.5};
  std::vector<double> y(x.size()), dx(x.size());
  const std::vector<double> ones(x.size(), 1.0);
  ops.gelu_forward(x.data(), y.data(), x.size());
  ops.gelu_backward(x.data(), ones.data(), dx.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const auto gelu = [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); };
    EXPECT_NEAR(y[i], gelu(x[i]), 1e-15);
    EXPECT_NEAR(dx[i], (gelu(x[i] + 1e-6) - gelu(x[i] - 1e-6)) / 2e-6, 1e-8);
  }
  EXPECT_NEAR(y[5], 0.8413447460685429, 1e-15);  // Φ(1) = 0.8413447460685429
  ops.tanh_forward(x.data(), y.data(), x.size());
  ops.tanh_backward(y.data(), ones.data(), dx.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_DOUBLE_EQ(y[i], std::tanh(x[i]));
    EXPECT_NEAR(dx[i], (std::tanh(x[i] + 1e-6) - std::tanh(x[i] - 1e-6)) / 2e-6, 1e-8);
  }
}

TEST(CpuOps, AdamAndAdamWFollowTorchSemantics) {
  for (const bool decoupled : {false, true}) {
    CpuOps<double> ops;
    std::vector<double> w{1.0, -0.5}, m{0, 0}, v{0, 0};
    const std::vector<double> g{0.3, -0.2};
    const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.1;
    double ew[2] = {1.0, -0.5}, em[2] = {0, 0}, ev[2] = {0, 0};
    for (int t = 1; t <= 3; ++t) {
      const double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
      ops.adam_update(w.data(), g.data(), m.data(), v.data(), 2, lr, b1, b2, eps, wd, decoupled, bc1, bc2);
      for (int i = 0; i < 2; ++i) {
        double gi = g[i];
        if (decoupled) ew[i] *= 1 - lr * wd; else gi += wd * ew[i];
        em[i] = b1 * em[i] + (1 - b1) * gi;
        ev[i] = b2 * ev[i] + (1 - b2) * gi * gi;
        ew[i] -= lr * (em[i] / bc1) / (std::sqrt(ev[i] / bc2) + eps);
      }
    }
    for (int i = 0; i < 2; ++i) {
      EXPECT_DOUBLE_EQ(w[i], ew[i]);
      EXPECT_DOUBLE_EQ(m[i], em[i]);
      EXPECT_DOUBLE_EQ(v[i], ev[i]);
    }
  }
  // First Adam step without decay moves every weight by lr·sign(g) (up to eps): m̂ = g, v̂ = g².
  CpuOps<double> ops;
  std::vector<double> w{0.0, 0.0}, m{0, 0}, v{0, 0};
  const std::vector<double> g{4.0, -0.001};
  ops.adam_update(w.data(), g.data(), m.data(), v.data(), 2, 0.1, 0.9, 0.999, 0.0, 0.0, false, 0.1, 0.001);
  EXPECT_NEAR(w[0], -0.1, 1e-12);
  EXPECT_NEAR(w[1], 0.1, 1e-12);
}

TEST(CpuOps, LambDirectionIsAdamDirectionPlusDecay) {
  CpuOps<double> ops;
  const std::vector<double> w{2.0, -1.0}, g{0.5, 0.25};
  std::vector<double> m{0.1, 0.0}, v{0.01, 0.0}, u(2);
  ops.lamb_direction(w.data(), g.data(), m.data(), v.data(), u.data(), 2, 0.9, 0.99, 1e-6, 0.01, 0.5, 0.2);
  const double m0[2] = {0.1, 0.0}, v0[2] = {0.01, 0.0};
  for (int i = 0; i < 2; ++i) {
    const double mi = 0.9 * m0[i] + (1 - 0.9) * g[i];
    const double vi = 0.99 * v0[i] + (1 - 0.99) * g[i] * g[i];
    EXPECT_DOUBLE_EQ(m[i], mi);
    EXPECT_DOUBLE_EQ(v[i], vi);
    EXPECT_NEAR(u[i], (mi / 0.5) / (std::sqrt(vi / 0.2) + 1e-6) + 0.01 * w[i], 1e-12);
  }
}

}  // namespace
}  // namespace dtsim::gpu
