// Optimizers against hand calculations and hand-written references of the papers' formulas, on
// gpu::CpuOps<double> (whose memory is host memory, so plain vectors serve as parameters and gradients).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/optimizer.hpp"

namespace dtsim::models {
namespace {

using Vec = std::vector<double>;

// Two weight tensors of very different scale, ‖w0‖ = 3 and ‖w1‖ = 50, then a bias. The gradients' norms
// differ too (0.3 and 10), so the layer-wise trust ratios differ.
std::vector<ParamTensor> two_scale_tensors() {
  return {{"dense0.weight", 0, 3, false}, {"dense1.weight", 3, 2, false}, {"dense1.bias", 5, 2, true}};
}
Vec two_scale_weights() { return {1, 2, 2, 30, -40, 0.5, -0.5}; }
Vec two_scale_gradient() { return {0.2, -0.1, 0.2, 6, 8, 0.1, 0.2}; }
// A different gradient for each of three steps, so that momentum and moments are really exercised.
Vec gradient_at(int step) {
  Vec g = two_scale_gradient();
  for (size_t i = 0; i < g.size(); ++i) g[i] *= 1.0 + 0.5 * step * (i % 2 == 0 ? 1.0 : -1.0);
  return g;
}

double norm(const Vec& x, const ParamTensor& t) {
  double s = 0;
  for (size_t i = t.offset; i < t.offset + t.size; ++i) s += x[i] * x[i];
  return std::sqrt(s);
}

OptimizerSettings settings_for(OptimizerKind kind) {
  OptimizerSettings s;
  s.kind = kind;
  return s;
}

void expect_near(const Vec& actual, const Vec& expected, double tol) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], tol) << "index " << i;
}

// ---- references: the papers' formulas, written out per element ---------------------------------------------

void sgd_reference(Vec& w, Vec& v, const Vec& g, double lr, const OptimizerSettings& s) {
  for (size_t i = 0; i < w.size(); ++i) {
    const double gi = g[i] + s.weight_decay * w[i];
    v[i] = s.momentum * v[i] + gi;
    w[i] -= lr * (s.nesterov ? gi + s.momentum * v[i] : v[i]);
  }
}

void adam_reference(Vec& w, Vec& m, Vec& v, const Vec& g, double lr, int t, const OptimizerSettings& s) {
  const bool decoupled = s.kind == OptimizerKind::AdamW;
  for (size_t i = 0; i < w.size(); ++i) {
    if (decoupled) w[i] *= 1 - lr * s.weight_decay;
    const double gi = decoupled ? g[i] : g[i] + s.weight_decay * w[i];
    m[i] = s.beta1 * m[i] + (1 - s.beta1) * gi;
    v[i] = s.beta2 * v[i] + (1 - s.beta2) * gi * gi;
    const double m_hat = m[i] / (1 - std::pow(s.beta1, t));
    const double v_hat = v[i] / (1 - std::pow(s.beta2, t));
    w[i] -= lr * m_hat / (std::sqrt(v_hat) + s.eps);
  }
}

void lars_reference(Vec& w, Vec& v, const Vec& g, double lr, const std::vector<ParamTensor>& tensors,
                    const OptimizerSettings& s) {
  for (const ParamTensor& t : tensors) {
    const bool excluded = s.exclude_bias_from_adaptation && t.is_bias;
    const double wd = excluded ? 0.0 : s.weight_decay;
    const double wn = norm(w, t), gn = norm(g, t);
    const double trust = excluded || wn == 0 || gn == 0 ? 1.0 : s.trust_coefficient * wn / (gn + wd * wn);
    for (size_t i = t.offset; i < t.offset + t.size; ++i) {
      const double gi = trust * (g[i] + wd * w[i]);
      v[i] = s.momentum * v[i] + gi;
      w[i] -= lr * (s.nesterov ? gi + s.momentum * v[i] : v[i]);
    }
  }
}

void lamb_reference(Vec& w, Vec& m, Vec& v, const Vec& g, double lr, int t, const std::vector<ParamTensor>& tensors,
                    const OptimizerSettings& s) {
  for (const ParamTensor& p : tensors) {
    const bool excluded = s.exclude_bias_from_adaptation && p.is_bias;
    const double wd = excluded ? 0.0 : s.weight_decay;
    Vec u(w.size(), 0.0);
    for (size_t i = p.offset; i < p.offset + p.size; ++i) {
      m[i] = s.beta1 * m[i] + (1 - s.beta1) * g[i];
      v[i] = s.beta2 * v[i] + (1 - s.beta2) * g[i] * g[i];
      const double m_hat = m[i] / (1 - std::pow(s.beta1, t));
      const double v_hat = v[i] / (1 - std::pow(s.beta2, t));
      u[i] = m_hat / (std::sqrt(v_hat) + s.eps) + wd * w[i];
    }
    const double wn = norm(w, p), un = norm(u, p);
    const double trust = excluded || wn == 0 || un == 0 ? 1.0 : wn / un;
    for (size_t i = p.offset; i < p.offset + p.size; ++i) w[i] -= lr * trust * u[i];
  }
}

// Three steps of `settings` on the two-scale problem, compared after each step with the reference.
void expect_three_steps_match_reference(const OptimizerSettings& s, double lr) {
  gpu::CpuOps<double> ops;
  const std::vector<ParamTensor> tensors = two_scale_tensors();
  Vec w = two_scale_weights();
  Vec ref = w, state1(w.size(), 0.0), state2(w.size(), 0.0);
  auto opt = make_optimizer<double>(ops, tensors, w.size(), s);
  for (int step = 0; step < 3; ++step) {
    const Vec g = gradient_at(step);
    opt->step(w.data(), g.data(), lr);
    switch (s.kind) {
      case OptimizerKind::Sgd: sgd_reference(ref, state1, g, lr, s); break;
      case OptimizerKind::Adam:
      case OptimizerKind::AdamW: adam_reference(ref, state1, state2, g, lr, step + 1, s); break;
      case OptimizerKind::Lars: lars_reference(ref, state1, g, lr, tensors, s); break;
      case OptimizerKind::Lamb: lamb_reference(ref, state1, state2, g, lr, step + 1, tensors, s); break;
    }
    SCOPED_TRACE("step " + std::to_string(step));
    expect_near(w, ref, 1e-12);
  }
  EXPECT_EQ(opt->steps_taken(), 3);
}

// ---- first steps by hand ----------------------------------------------------------------------------------

TEST(Sgd, TwoStepsByHand) {
  gpu::CpuOps<double> ops;
  OptimizerSettings s = settings_for(OptimizerKind::Sgd);
  s.momentum = 0.9;
  s.weight_decay = 0.01;
  const Vec g{0.5, 0.25};
  for (const bool nesterov : {false, true}) {
    s.nesterov = nesterov;
    Vec w{1.0, -2.0};
    auto opt = make_optimizer<double>(ops, {}, 2, s);
    opt->step(w.data(), g.data(), 0.1);
    // g' = g + 0.01·w = (0.51, 0.23) = v; heavy ball w -= 0.1·v, Nesterov w -= 0.1·(g' + 0.9·v).
    expect_near(w, nesterov ? Vec{0.9031, -2.0437} : Vec{0.949, -2.023}, 1e-12);
    if (!nesterov) {
      opt->step(w.data(), g.data(), 0.1);
      // g' = (0.50949, 0.22977); v = 0.9·(0.51, 0.23) + g' = (0.96849, 0.43677); w -= 0.1·v.
      expect_near(w, {0.852151, -2.066677}, 1e-12);
    }
  }
}

TEST(Adam, ConstantGradientStepsByLrEveryStepThanksToBiasCorrection) {
  // With a constant g, m̂ = g and v̂ = g² exactly at every t when the corrections use 1 − β^t, so each
  // step moves w by lr·g/(|g| + eps). A wrong step counter breaks this from the second step on.
  gpu::CpuOps<double> ops;
  OptimizerSettings s = settings_for(OptimizerKind::Adam);
  s.eps = 1e-8;
  Vec w{1.0, -2.0};
  const Vec g{0.5, -4.0};
  auto opt = make_optimizer<double>(ops, {}, 2, s);
  for (int t = 1; t <= 3; ++t) {
    opt->step(w.data(), g.data(), 0.1);
    expect_near(w, {1.0 - 0.1 * t, -2.0 + 0.1 * t}, 1e-8);
  }
}

TEST(AdamW, DecoupledDecayShrinksTheWeightsBeforeTheAdamStep) {
  // Constant g: w_t = (1 − lr·wd)·w_{t−1} − lr·sign(g), whereas Adam's L2 decay would enter the moments.
  gpu::CpuOps<double> ops;
  OptimizerSettings s = settings_for(OptimizerKind::AdamW);
  s.weight_decay = 0.5;
  Vec w{1.0, -2.0};
  const Vec g{0.5, -4.0};
  auto opt = make_optimizer<double>(ops, {}, 2, s);
  // 1 − lr·wd = 0.95:  1 → 0.85 → 0.7075 → 0.572125  and  −2 → −1.8 → −1.61 → −1.4295.
  const Vec expected[3] = {{0.85, -1.8}, {0.7075, -1.61}, {0.572125, -1.4295}};
  for (const Vec& e : expected) {
    opt->step(w.data(), g.data(), 0.1);
    expect_near(w, e, 1e-8);
  }
}

TEST(Lars, FirstStepByHandUsesOneTrustRatioPerTensor) {
  gpu::CpuOps<double> ops;
  OptimizerSettings s = settings_for(OptimizerKind::Lars);
  s.trust_coefficient = 0.001;
  s.momentum = 0.9;
  for (const double wd : {0.0, 0.1}) {
    s.weight_decay = wd;
    Vec w = two_scale_weights();
    const Vec g = two_scale_gradient();
    auto opt = make_optimizer<double>(ops, two_scale_tensors(), w.size(), s);
    opt->step(w.data(), g.data(), 1.0);
    if (wd == 0.0) {
      // dense0: trust = 0.001·3/0.3 = 0.01; dense1: trust = 0.001·50/10 = 0.005; bias: plain SGD.
      expect_near(w, {1 - 0.002, 2 + 0.001, 2 - 0.002, 30 - 0.03, -40 - 0.04, 0.4, -0.7}, 1e-12);
    } else {
      // dense0: trust = 0.003/(0.3 + 0.3) = 0.005, g + wd·w = (0.3, 0.1, 0.4);
      // dense1: trust = 0.05/(10 + 5) = 1/300, g + wd·w = (9, 4); bias: no decay, trust 1.
      expect_near(w, {1 - 0.0015, 2 - 0.0005, 2 - 0.002, 30 - 0.03, -40 - 4.0 / 300, 0.4, -0.7}, 1e-12);
    }
  }
}

TEST(Lamb, FirstStepByHandScalesEachTensorToItsWeightNorm) {
  // At t = 1, m̂ = g and v̂ = g², so u = g/(|g| + eps) ≈ sign(g) (wd = 0): dense0 u = (1, −1, 1),
  // trust = 3/√3; dense1 u = (1, 1), trust = 50/√2; the bias keeps trust 1.
  gpu::CpuOps<double> ops;
  const OptimizerSettings s = settings_for(OptimizerKind::Lamb);
  Vec w = two_scale_weights();
  const Vec g = two_scale_gradient();
  auto opt = make_optimizer<double>(ops, two_scale_tensors(), w.size(), s);
  const double lr = 0.01;
  opt->step(w.data(), g.data(), lr);
  const double t0 = lr * std::sqrt(3.0), t1 = lr * 50 / std::sqrt(2.0);
  expect_near(w, {1 - t0, 2 + t0, 2 - t0, 30 - t1, -40 - t1, 0.5 - lr, -0.5 - lr}, 1e-7);
}

// ---- three steps against the references -------------------------------------------------------------------

TEST(Optimizers, ThreeStepsMatchTheReferenceFormulas) {
  for (const OptimizerKind kind :
       {OptimizerKind::Sgd, OptimizerKind::Adam, OptimizerKind::AdamW, OptimizerKind::Lars, OptimizerKind::Lamb}) {
    for (const bool nesterov : {false, true}) {
      for (const double wd : {0.0, 0.05}) {
        OptimizerSettings s = settings_for(kind);
        s.weight_decay = wd;
        s.nesterov = nesterov && (kind == OptimizerKind::Sgd || kind == OptimizerKind::Lars);
        if (nesterov && !s.nesterov) continue;
        s.trust_coefficient = 0.02;
        SCOPED_TRACE(std::string(to_string(kind)) + (s.nesterov ? " nesterov" : "") + " wd " + std::to_string(wd));
        expect_three_steps_match_reference(s, kind == OptimizerKind::Sgd ? 0.05 : 0.01);
      }
    }
  }
}

// ---- bias exclusion ---------------------------------------------------------------------------------------

TEST(Lars, BiasesAreAdaptedOnlyWhenNotExcluded) {
  gpu::CpuOps<double> ops;
  OptimizerSettings s = settings_for(OptimizerKind::Lars);
  s.weight_decay = 0.1;
  s.trust_coefficient = 0.001;
  const std::vector<ParamTensor> tensors = two_scale_tensors();
  const Vec g = two_scale_gradient();
  for (const bool exclude : {true, false}) {
    s.exclude_bias_from_adaptation = exclude;
    Vec w = two_scale_weights();
    auto opt = make_optimizer<double>(ops, tensors, w.size(), s);
    opt->step(w.data(), g.data(), 1.0);
    if (exclude) {
      expect_near({w[5], w[6]}, {0.5 - 0.1, -0.5 - 0.2}, 1e-12);  // w -= lr·g
    } else {
      // ‖w‖ = √0.5, ‖g‖ = √0.05; trust = 0.001·√0.5/(√0.05 + 0.1·√0.5); g + wd·w = (0.15, 0.15).
      const double trust = 0.001 * std::sqrt(0.5) / (std::sqrt(0.05) + 0.1 * std::sqrt(0.5));
      expect_near({w[5], w[6]}, {0.5 - trust * 0.15, -0.5 - trust * 0.15}, 1e-12);
    }
  }
}

TEST(Lamb, BiasesGetNoDecayAndTrustOneWhenExcluded) {
  gpu::CpuOps<double> ops;
  OptimizerSettings s = settings_for(OptimizerKind::Lamb);
  s.weight_decay = 0.5;
  const std::vector<ParamTensor> tensors = two_scale_tensors();
  const Vec g = two_scale_gradient();
  const double lr = 0.01;
  for (const bool exclude : {true, false}) {
    s.exclude_bias_from_adaptation = exclude;
    Vec w = two_scale_weights();
    auto opt = make_optimizer<double>(ops, tensors, w.size(), s);
    opt->step(w.data(), g.data(), lr);
    if (exclude) {
      expect_near({w[5], w[6]}, {0.5 - lr, -0.5 - lr}, 1e-7);  // u = sign(g), trust 1
    } else {
      // u = sign(g) + 0.5·w = (1.25, 0.75); trust = ‖w‖/‖u‖ = √0.5/√2.125.
      const double trust = std::sqrt(0.5) / std::sqrt(1.25 * 1.25 + 0.75 * 0.75);
      expect_near({w[5], w[6]}, {0.5 - lr * trust * 1.25, -0.5 - lr * trust * 0.75}, 1e-7);
    }
  }
}

TEST(Lars, TrustIsOneForZeroWeightsOrZeroGradient) {
  gpu::CpuOps<double> ops;
  OptimizerSettings s = settings_for(OptimizerKind::Lars);
  const std::vector<ParamTensor> tensors{{"a", 0, 2, false}, {"b", 2, 2, false}};
  Vec w{0, 0, 1, 1};
  const Vec g{0.5, -0.5, 0, 0};
  auto opt = make_optimizer<double>(ops, tensors, 4, s);
  opt->step(w.data(), g.data(), 0.1);
  expect_near(w, {-0.05, 0.05, 1, 1}, 1e-15);
}

// ---- interface: names, state, validation --------------------------------------------------------------------

TEST(Optimizers, ParseNamesAndReportTheirState) {
  gpu::CpuOps<double> ops;
  const struct {
    const char* text;
    OptimizerKind kind;
    int state;
  } cases[] = {{"sgd", OptimizerKind::Sgd, 1},
               {"adam", OptimizerKind::Adam, 2},
               {"adamw", OptimizerKind::AdamW, 2},
               {"lars", OptimizerKind::Lars, 1},
               {"lamb", OptimizerKind::Lamb, 2}};
  for (const auto& c : cases) {
    EXPECT_EQ(parse_optimizer_kind(c.text), c.kind);
    EXPECT_STREQ(to_string(c.kind), c.text);
    auto opt = make_optimizer<double>(ops, two_scale_tensors(), 7, settings_for(c.kind));
    EXPECT_EQ(opt->name(), c.text);
    EXPECT_EQ(opt->state_values_per_param(), c.state) << c.text;
    EXPECT_EQ(opt->steps_taken(), 0);
  }
  OptimizerSettings plain = settings_for(OptimizerKind::Sgd);
  plain.momentum = 0.0;  // torch keeps no momentum buffer then
  EXPECT_EQ(make_optimizer<double>(ops, {}, 7, plain)->state_values_per_param(), 0);
  EXPECT_THROW(parse_optimizer_kind("SGD"), std::invalid_argument);
  EXPECT_THROW(parse_optimizer_kind("rmsprop"), std::invalid_argument);
}

TEST(Optimizers, RejectSettingsOutOfRange) {
  gpu::CpuOps<double> ops;
  const auto make = [&](OptimizerSettings s) { return make_optimizer<double>(ops, two_scale_tensors(), 7, s); };
  OptimizerSettings s = settings_for(OptimizerKind::Sgd);
  s.momentum = 1.0;
  EXPECT_THROW(make(s), std::invalid_argument);
  s.momentum = 0.0;
  s.nesterov = true;
  EXPECT_THROW(make(s), std::invalid_argument);
  s = settings_for(OptimizerKind::Adam);
  s.beta2 = 1.0;
  EXPECT_THROW(make(s), std::invalid_argument);
  s = settings_for(OptimizerKind::Lamb);
  s.eps = 0.0;
  EXPECT_THROW(make(s), std::invalid_argument);
  s = settings_for(OptimizerKind::AdamW);
  s.weight_decay = -0.1;
  EXPECT_THROW(make(s), std::invalid_argument);
  s.weight_decay = std::nan("");
  EXPECT_THROW(make(s), std::invalid_argument);
  s = settings_for(OptimizerKind::Lars);
  s.trust_coefficient = 0.0;
  EXPECT_THROW(make(s), std::invalid_argument);
  try {
    s.trust_coefficient = -1e-3;
    make(s);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("trust_coefficient must be > 0, got -0.001"), std::string::npos) << e.what();
  }
}

TEST(Optimizers, TensorsMustTileTheParameterVector) {
  gpu::CpuOps<double> ops;
  for (const OptimizerKind kind : {OptimizerKind::Lars, OptimizerKind::Lamb}) {
    const OptimizerSettings s = settings_for(kind);
    EXPECT_THROW(make_optimizer<double>(ops, {}, 7, s), std::invalid_argument);  // layer-wise needs tensors
    EXPECT_THROW(make_optimizer<double>(ops, two_scale_tensors(), 8, s), std::invalid_argument);  // too short
    EXPECT_THROW(make_optimizer<double>(ops, {{"a", 0, 3, false}, {"b", 2, 5, false}}, 7, s),
                 std::invalid_argument);  // overlap
    EXPECT_THROW(make_optimizer<double>(ops, {{"a", 0, 3, false}, {"b", 4, 3, false}}, 7, s),
                 std::invalid_argument);  // gap
    // Order does not matter, nor do empty tensors.
    EXPECT_NO_THROW(make_optimizer<double>(ops, {{"b", 3, 4, false}, {"e", 3, 0, false}, {"a", 0, 3, false}}, 7, s));
  }
  // Elementwise optimizers do not need the list, but a wrong one is still a caller's bug.
  EXPECT_NO_THROW(make_optimizer<double>(ops, {}, 7, settings_for(OptimizerKind::Adam)));
  EXPECT_THROW(make_optimizer<double>(ops, two_scale_tensors(), 9, settings_for(OptimizerKind::Sgd)),
               std::invalid_argument);
}

TEST(Optimizers, LayerWiseUpdatesDoNotDependOnTheTensorListOrder) {
  gpu::CpuOps<double> ops;
  std::vector<ParamTensor> reversed = two_scale_tensors();
  std::swap(reversed[0], reversed[2]);
  for (const OptimizerKind kind : {OptimizerKind::Lars, OptimizerKind::Lamb}) {
    Vec a = two_scale_weights(), b = a;
    const Vec g = two_scale_gradient();
    make_optimizer<double>(ops, two_scale_tensors(), 7, settings_for(kind))->step(a.data(), g.data(), 0.1);
    make_optimizer<double>(ops, reversed, 7, settings_for(kind))->step(b.data(), g.data(), 0.1);
    EXPECT_EQ(a, b) << to_string(kind);
  }
}

}  // namespace
}  // namespace dtsim::models

namespace dtsim::models {
namespace {

// A checkpoint restore: copying the state makes the next steps identical to the original optimizer's.
TEST(OptimizerCheckpoint, CopiedStateContinuesIdentically) {
  for (const OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::Adam, OptimizerKind::Lars, OptimizerKind::Lamb}) {
    gpu::CpuOps<double> ops;
    const std::vector<ParamTensor> tensors{{"w", 0, 3, false}, {"b", 3, 1, true}};
    OptimizerSettings s;
    s.kind = kind;
    s.weight_decay = 0.01;
    auto original = make_optimizer<double>(ops, tensors, 4, s);
    auto restored = make_optimizer<double>(ops, tensors, 4, s);
    std::vector<double> w{1, -2, 3, 0.5};
    const std::vector<double> g{0.1, 0.2, -0.3, 0.05};
    for (int i = 0; i < 3; ++i) original->step(w.data(), g.data(), 0.01);
    restored->copy_state_from(*original);
    EXPECT_EQ(restored->steps_taken(), 3);
    std::vector<double> a = w, b = w;
    original->step(a.data(), g.data(), 0.01);
    restored->step(b.data(), g.data(), 0.01);
    EXPECT_EQ(a, b) << to_string(kind);
    OptimizerSettings other = s;
    other.kind = kind == OptimizerKind::Sgd ? OptimizerKind::Adam : OptimizerKind::Sgd;
    EXPECT_THROW(make_optimizer<double>(ops, tensors, 4, other)->copy_state_from(*original), std::invalid_argument);
  }
}

}  // namespace
}  // namespace dtsim::models
