// The federated numerics on the quadratic of validation.md §1: two clients with F_i(x) = ½(x − e_i)²,
// e = (0, 1), weights ½ each, full-gradient local steps η = 0.01, τ = (1, 10). The fixed points have closed
// forms (a_i = 1 − (1 − η)^τ_i): FedAvg Σ p_i a_i e_i / Σ p_i a_i, FedProx the same with 1 − η(1 + μ), FedNova
// with a_i/τ_i, SCAFFOLD the true optimum ½. (The simulator's FL strategy is checked on the same problem in
// tests/sim.) Here the client loop is written out with the same building blocks the strategy uses.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/federated.hpp"

namespace dtsim::models {
namespace {

double closed_form(FlAlgorithm algorithm, double mu) {
  const double eta = 0.01, tau[2] = {1, 10}, e[2] = {0, 1};
  const double contraction = algorithm == FlAlgorithm::FedProx ? 1 - eta * (1 + mu) : 1 - eta;
  double num = 0, den = 0;
  for (int i = 0; i < 2; ++i) {
    double a = 1 - std::pow(contraction, tau[i]);
    if (algorithm == FlAlgorithm::FedNova) a /= tau[i];
    num += 0.5 * a * e[i];
    den += 0.5 * a;
  }
  return num / den;
}

double run_rounds(FlAlgorithm algorithm, double mu, int rounds) {
  gpu::CpuOps<double> ops;
  const double eta = 0.01, e[2] = {0, 1};
  const int64_t tau[2] = {1, 10};
  double x = 0.3, c_global = 0, c_local[2] = {0, 0};
  ServerSettings settings;
  settings.algorithm = algorithm;
  settings.total_clients = 2;
  ServerAggregator<double> server(ops, 1, settings);
  for (int r = 0; r < rounds; ++r) {
    server.begin_round();
    for (int i = 0; i < 2; ++i) {
      double y = x, grad = 0, scratch = 0;
      for (int64_t k = 0; k < tau[i]; ++k) {
        grad = y - e[i];
        correct_local_gradient(ops, algorithm, &grad, &y, &x, 1, mu, &c_global, &c_local[i], &scratch);
        y -= eta * grad;
      }
      double delta_c = 0;
      if (algorithm == FlAlgorithm::Scaffold)
        scaffold_update_control(ops, &c_local[i], &c_global, &x, &y, 1, tau[i], eta, &delta_c);
      const double delta = y - x;
      server.add(&delta, 0.5, fednova_step_norm(tau[i], 0.0), &delta_c);
    }
    server.finish(&x, &c_global);
  }
  return x;
}

TEST(Federated, ClosedFormsOfTheValidationNotes) {
  EXPECT_NEAR(closed_form(FlAlgorithm::FedAvg, 0), 0.905319, 1e-6);
  EXPECT_NEAR(closed_form(FlAlgorithm::FedProx, 1), 0.901442, 1e-6);
  EXPECT_NEAR(closed_form(FlAlgorithm::FedProx, 10), 0.862187, 1e-6);
  EXPECT_NEAR(closed_form(FlAlgorithm::FedProx, 99), 0.5, 1e-12);
  EXPECT_NEAR(closed_form(FlAlgorithm::FedNova, 0), 0.488799, 1e-6);
}

TEST(Federated, RoundsConvergeToTheFixedPoints) {
  EXPECT_NEAR(run_rounds(FlAlgorithm::FedAvg, 0, 3000), 0.905319, 1e-6);
  EXPECT_NEAR(run_rounds(FlAlgorithm::FedProx, 1, 3000), 0.901442, 1e-6);
  EXPECT_NEAR(run_rounds(FlAlgorithm::FedProx, 10, 3000), 0.862187, 1e-6);
  EXPECT_NEAR(run_rounds(FlAlgorithm::FedProx, 99, 3000), 0.5, 1e-6);
  EXPECT_NEAR(run_rounds(FlAlgorithm::FedNova, 0, 3000), 0.488799, 1e-6);
  EXPECT_NEAR(run_rounds(FlAlgorithm::Scaffold, 0, 3000), 0.5, 1e-6);
}

TEST(Federated, FedNovaStepNormWithMomentum) {
  EXPECT_DOUBLE_EQ(fednova_step_norm(10, 0.0), 10.0);
  // ρ = 0.5, τ = 3: (1 − 0.5)/0.5 + (1 − 0.25)/0.5 + (1 − 0.125)/0.5 = 1 + 1.5 + 1.75.
  EXPECT_DOUBLE_EQ(fednova_step_norm(3, 0.5), 4.25);
  EXPECT_DOUBLE_EQ(fednova_step_norm(0, 0.9), 0.0);
}

TEST(Federated, ServerMomentumAndLearningRate) {
  gpu::CpuOps<double> ops;
  ServerSettings s;
  s.lr = 0.5;
  s.momentum = 0.9;
  ServerAggregator<double> server(ops, 2, s);
  std::vector<double> x{1.0, 2.0};
  const std::vector<double> d1{1.0, 0.0}, d2{0.0, 3.0};
  // Round 1: Δ̄ = (1·d1 + 3·d2)/4 = (0.25, 2.25); v = Δ̄; x += 0.5·v.
  server.add(d1.data(), 1.0, 1.0, nullptr);
  server.add(d2.data(), 3.0, 1.0, nullptr);
  server.finish(x.data(), nullptr);
  EXPECT_DOUBLE_EQ(x[0], 1.125);
  EXPECT_DOUBLE_EQ(x[1], 3.125);
  // Round 2, same clients: v = 0.9·v + Δ̄ = 1.9·Δ̄.
  server.begin_round();
  server.add(d1.data(), 1.0, 1.0, nullptr);
  server.add(d2.data(), 3.0, 1.0, nullptr);
  server.finish(x.data(), nullptr);
  EXPECT_DOUBLE_EQ(x[0], 1.125 + 0.5 * 1.9 * 0.25);
  EXPECT_DOUBLE_EQ(x[1], 3.125 + 0.5 * 1.9 * 2.25);
  // An empty round changes nothing.
  server.begin_round();
  const std::vector<double> before = x;
  server.finish(x.data(), nullptr);
  EXPECT_EQ(x, before);
}

TEST(Federated, RejectsBadInputs) {
  gpu::CpuOps<double> ops;
  EXPECT_THROW(parse_fl_algorithm("fedsgd"), std::invalid_argument);
  ServerSettings s;
  s.algorithm = FlAlgorithm::FedNova;
  ServerAggregator<double> nova(ops, 1, s);
  const double d = 1.0;
  EXPECT_THROW(nova.add(&d, 1.0, 0.0, nullptr), std::invalid_argument);
  EXPECT_THROW(nova.add(&d, 0.0, 1.0, nullptr), std::invalid_argument);
  s.lr = 0;
  EXPECT_THROW(ServerAggregator<double>(ops, 1, s), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::models

#include "models/staleness.hpp"

namespace dtsim::models {
namespace {

TEST(Staleness, LearningRateFactors) {
  EXPECT_EQ(staleness_lr_factor(StalenessRule::None, 7, 0.5, 2), 1.0);
  EXPECT_EQ(staleness_lr_factor(StalenessRule::Inverse, 0, 0, 0), 1.0);
  EXPECT_EQ(staleness_lr_factor(StalenessRule::Inverse, 4, 0, 0), 0.25);
  EXPECT_DOUBLE_EQ(staleness_lr_factor(StalenessRule::Polynomial, 3, 0.5, 0), 0.5);  // (1+3)^-0.5
  EXPECT_EQ(staleness_lr_factor(StalenessRule::Hinge, 2, 0.5, 2), 1.0);
  EXPECT_DOUBLE_EQ(staleness_lr_factor(StalenessRule::Hinge, 6, 0.5, 2), 1.0 / 3.0);  // 1/(0.5·4 + 1)
  EXPECT_THROW(staleness_lr_factor(StalenessRule::Inverse, -1, 0, 0), std::invalid_argument);
  EXPECT_THROW(parse_staleness_rule("linear"), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::models
