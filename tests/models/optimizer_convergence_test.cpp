// Every optimizer must drive a strongly convex quadratic to its closed-form minimiser.
//
// f(w) = ½‖A·w − b‖² with A = H·diag(s), H the 4×4 Hadamard matrix. H's columns are orthogonal with squared
// norm 4, so AᵀA = diag(4·s²) (curvatures 4, 16, 9 and 1: condition number 16) while A itself is dense. With
// b = A·w*, the minimiser is w*; with L2 decay ½·Σ wd_i·w_i² added it is w_i = 4s_i²·w*_i / (4s_i² + wd_i),
// where wd_i is 0 for a tensor exempt from decay.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/optimizer.hpp"

namespace dtsim::models {
namespace {

using Vec = std::vector<double>;

constexpr int kDim = 4;
constexpr double kHadamard[kDim][kDim] = {{1, 1, 1, 1}, {1, -1, 1, -1}, {1, 1, -1, -1}, {1, -1, -1, 1}};
constexpr double kColumnScale[kDim] = {1.0, 2.0, 1.5, 0.5};
const Vec kMinimiser{2.0, -1.0, 0.5, 0.25};
// A weight tensor of three values and a one-value bias, as a layer-wise optimizer sees them.
const std::vector<ParamTensor> kTensors{{"dense.weight", 0, 3, false}, {"dense.bias", 3, 1, true}};

double a(int r, int c) { return kHadamard[r][c] * kColumnScale[c]; }

// ∇f(w) = Aᵀ(A·w − b), computed from A rather than from the diagonal form, so the test does not assume it.
Vec gradient(const Vec& w) {
  Vec b(kDim, 0.0), residual(kDim, 0.0), g(kDim, 0.0);
  for (int r = 0; r < kDim; ++r)
    for (int c = 0; c < kDim; ++c) b[r] += a(r, c) * kMinimiser[c];
  for (int r = 0; r < kDim; ++r) {
    for (int c = 0; c < kDim; ++c) residual[r] += a(r, c) * w[c];
    residual[r] -= b[r];
  }
  for (int c = 0; c < kDim; ++c)
    for (int r = 0; r < kDim; ++r) g[c] += a(r, c) * residual[r];
  return g;
}

Vec ridge_minimiser(double wd, bool bias_decayed) {
  Vec w(kDim);
  for (int i = 0; i < kDim; ++i) {
    const double curvature = 4 * kColumnScale[i] * kColumnScale[i];
    const double decay = i == 3 && !bias_decayed ? 0.0 : wd;
    w[i] = curvature * kMinimiser[i] / (curvature + decay);
  }
  return w;
}

// Runs `steps` steps from w = (0.5, …) with a cosine-annealed learning rate lr0·½(1 + cos(π·k/steps)):
// the adaptive and layer-wise methods take steps of roughly lr·‖w‖ or lr even near the optimum, so only a
// vanishing rate lets them settle on it.
Vec minimise(const OptimizerSettings& s, double lr0, int steps, bool anneal) {
  gpu::CpuOps<double> ops;
  auto opt = make_optimizer<double>(ops, kTensors, kDim, s);
  Vec w(kDim, 0.5);
  for (int k = 0; k < steps; ++k) {
    const Vec g = gradient(w);
    const double lr = anneal ? lr0 * 0.5 * (1 + std::cos(M_PI * k / steps)) : lr0;
    opt->step(w.data(), g.data(), lr);
  }
  return w;
}

void expect_converged(const Vec& w, const Vec& expected, double tol) {
  for (int i = 0; i < kDim; ++i) EXPECT_NEAR(w[i], expected[i], tol) << "index " << i;
}

OptimizerSettings settings_for(OptimizerKind kind, double wd) {
  OptimizerSettings s;
  s.kind = kind;
  s.weight_decay = wd;
  return s;
}

TEST(Quadratic, TheGradientVanishesAtTheClosedFormMinimiser) {
  // Guards the problem itself: a wrong A or b would make every test below meaningless.
  for (const double g : gradient(kMinimiser)) EXPECT_NEAR(g, 0.0, 1e-14);
  const Vec g = gradient(Vec(kDim, 0.0));  // = −diag(4s²)·w*
  expect_converged(g, {-8.0, 16.0, -4.5, -0.25}, 1e-14);
}

TEST(Quadratic, SgdWithMomentumConverges) {
  for (const bool nesterov : {false, true}) {
    OptimizerSettings s = settings_for(OptimizerKind::Sgd, 0.0);
    s.momentum = 0.9;
    s.nesterov = nesterov;
    expect_converged(minimise(s, 0.05, 600, false), kMinimiser, 1e-9);
  }
}

TEST(Quadratic, SgdWithWeightDecayConvergesToTheRidgeSolution) {
  OptimizerSettings s = settings_for(OptimizerKind::Sgd, 0.5);
  s.momentum = 0.9;
  expect_converged(minimise(s, 0.05, 600, false), ridge_minimiser(0.5, true), 1e-9);
}

TEST(Quadratic, AdamConverges) {
  expect_converged(minimise(settings_for(OptimizerKind::Adam, 0.0), 0.05, 4000, true), kMinimiser, 1e-6);
}

TEST(Quadratic, AdamWithL2DecayConvergesToTheRidgeSolution) {
  expect_converged(minimise(settings_for(OptimizerKind::Adam, 0.5), 0.05, 4000, true), ridge_minimiser(0.5, true),
                   1e-6);
}

TEST(Quadratic, AdamWConverges) {
  expect_converged(minimise(settings_for(OptimizerKind::AdamW, 0.0), 0.05, 4000, true), kMinimiser, 1e-6);
}

TEST(Quadratic, LarsConverges) {
  OptimizerSettings s = settings_for(OptimizerKind::Lars, 0.0);
  s.trust_coefficient = 0.01;
  expect_converged(minimise(s, 1.0, 4000, true), kMinimiser, 1e-6);
}

TEST(Quadratic, LarsWithDecayConvergesToTheRidgeSolutionWithAnUndecayedBias) {
  OptimizerSettings s = settings_for(OptimizerKind::Lars, 0.5);
  s.trust_coefficient = 0.01;
  expect_converged(minimise(s, 1.0, 4000, true), ridge_minimiser(0.5, false), 1e-6);
}

TEST(Quadratic, LambConverges) {
  expect_converged(minimise(settings_for(OptimizerKind::Lamb, 0.0), 0.02, 4000, true), kMinimiser, 1e-6);
}

}  // namespace
}  // namespace dtsim::models
