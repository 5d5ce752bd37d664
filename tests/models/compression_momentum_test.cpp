// Deep Gradient Compression's momentum correction with momentum factor masking (Lin et al. 2018, §3.2),
// against an independent replay of the algorithm and its closed forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/compression/compression.hpp"
#include "models/random.hpp"

namespace dtsim::models {
namespace {

using Vec = std::vector<double>;

std::vector<TensorLayout> one_vector(size_t d) { return {{{"x", 0, d, false}, 0, 0}}; }

CompressionSettings corrected_topk(double ratio, double beta) {
  CompressionSettings s;
  s.kind = CompressorKind::TopK;
  s.ratio = ratio;
  s.error_feedback = true;
  s.momentum_correction = beta;
  return s;
}

TEST(MomentumCorrection, ReplaysDgcStepByStep) {
  // u = βu + g; v = v + u; send the top-k of v; clear v and u where sent. The replay ranks like top-k:
  // by magnitude, ties to the lower index.
  const size_t d = 6;
  const double beta = 0.9;
  gpu::CpuOps<double> ops;
  Compressor<double> c(ops, one_vector(d), d, corrected_topk(2.0 / d, beta), 0);
  Vec u(d, 0.0), v(d, 0.0);
  Rng rng(3, "momentum-correction-test");
  for (int64_t step = 0; step < 40; ++step) {
    Vec g(d);
    for (size_t j = 0; j < d; ++j) g[j] = rng.normal() * (j + 1);  // coordinates of different scales
    for (size_t j = 0; j < d; ++j) {
      u[j] = beta * u[j] + g[j];
      v[j] += u[j];
    }
    std::vector<size_t> order(d);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return std::fabs(v[a]) > std::fabs(v[b]); });
    Vec expected(d, 0.0);
    for (size_t i = 0; i < 2; ++i) {
      expected[order[i]] = v[order[i]];
      v[order[i]] = 0.0;
      u[order[i]] = 0.0;
    }
    Vec sent = g;
    c.compress(sent.data(), step);
    for (size_t j = 0; j < d; ++j) EXPECT_NEAR(sent[j], expected[j], 1e-12 * (1 + std::fabs(expected[j]))) << step;
    for (size_t j = 0; j < d; ++j) EXPECT_NEAR(c.residual()[j], v[j], 1e-12 * (1 + std::fabs(v[j])));
  }
}

TEST(MomentumCorrection, SendingEverythingIsPlainSgd) {
  // With k = d every value is sent every step, so masking restarts every momentum: the message is g itself.
  const size_t d = 5;
  gpu::CpuOps<double> ops;
  Compressor<double> c(ops, one_vector(d), d, corrected_topk(1.0, 0.9), 0);
  for (int64_t step = 0; step < 5; ++step) {
    Vec g{1.0 + step, -2.0, 0.5, 3.0, -0.25 * step - 1};
    Vec sent = g;
    c.compress(sent.data(), step);
    EXPECT_EQ(sent, g);
  }
}

TEST(MomentumCorrection, UncompressedStepsSendPlainMomentum) {
  // Before start_step the tensor goes dense: u_t = Σ β^(t−i) g, i.e. g (1 − β^(t+1)) / (1 − β) for a constant g.
  const double beta = 0.5;
  CompressionSettings s = corrected_topk(0.2, beta);
  s.start_step = 100;
  gpu::CpuOps<double> ops;
  Compressor<double> c(ops, one_vector(3), 3, s, 0);
  const Vec g{2.0, -4.0, 1.0};
  for (int t = 0; t < 6; ++t) {
    Vec sent = g;
    c.compress(sent.data(), t);
    const double factor = (1 - std::pow(beta, t + 1)) / (1 - beta);
    for (size_t j = 0; j < 3; ++j) EXPECT_DOUBLE_EQ(sent[j], g[j] * factor);
  }
}

TEST(MomentumCorrection, SettingsThatCannotWorkAreRejected) {
  CompressionSettings s = corrected_topk(0.1, 0.9);
  EXPECT_NO_THROW(validate(s));
  s.error_feedback = false;
  EXPECT_THROW(validate(s), std::invalid_argument);
  s = corrected_topk(0.1, 1.0);
  EXPECT_THROW(validate(s), std::invalid_argument);
  s = corrected_topk(0.1, 0.9);
  s.kind = CompressorKind::Qsgd;
  EXPECT_THROW(validate(s), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::models
