// Who takes part in a federated round (pure, no simulation): sampling frequencies against their exact
// probabilities, over-commit and straggler counts, protocol stragglers' work, availability, the [fl] keys.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "sim/config/run_config.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/strategies/federated/federated_plan.hpp"
#include "sim/strategies/federated/federated_secagg.hpp"
#include "tests/sim/topology_support.hpp"

namespace dtsim::sim {
namespace {

using testing::config_error_of;

constexpr int kRounds = 20000;

std::vector<int> identity_nodes(int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// |count − R·p| within 5 binomial standard deviations (a false alarm about once in 3.5 million per check).
void expect_frequency(int64_t count, int64_t trials, double p, const std::string& what) {
  const double sd = std::sqrt(trials * p * (1 - p));
  EXPECT_NEAR(static_cast<double>(count), trials * p, 5 * sd + 1e-9) << what;
}

std::vector<int64_t> selection_counts(const FlConfig& fl, const std::vector<double>& samples, int rounds) {
  const FaultSchedule faults(FaultConfig{}, identity_nodes(static_cast<int>(samples.size())));
  const RoundPlanner planner(fl, 42, samples, 1, faults);
  std::vector<int64_t> counts(samples.size(), 0);
  for (int r = 0; r < rounds; ++r)
    for (const ClientAssignment& a : planner.plan(r, 0.0).selected) ++counts[a.client];
  return counts;
}

TEST(FederatedPlan, UniformSamplingIncludesEachClientWithProbabilityKOverN) {
  FlConfig fl;
  fl.clients_per_round = 3;
  const std::vector<double> samples{5, 50, 500, 5, 50, 500, 5, 50, 500, 5000};  // ignored by uniform sampling
  const std::vector<int64_t> counts = selection_counts(fl, samples, kRounds);
  for (size_t c = 0; c < counts.size(); ++c) expect_frequency(counts[c], kRounds, 0.3, "client " + std::to_string(c));
  EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), int64_t{0}), 3 * kRounds);
}

TEST(FederatedPlan, WeightedSamplingMatchesSuccessiveSamplingProbabilities) {
  FlConfig fl;
  fl.clients_per_round = 2;
  fl.weighted_sampling = true;
  const std::vector<double> w{1, 2, 3, 4, 10};
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  const std::vector<int64_t> counts = selection_counts(fl, w, kRounds);
  for (size_t i = 0; i < w.size(); ++i) {
    // Drawn first, or drawn second after some j: P(i) = w_i/W + Σ_{j≠i} (w_j/W)·w_i/(W − w_j).
    double p = w[i] / total;
    for (size_t j = 0; j < w.size(); ++j)
      if (j != i) p += w[j] / total * w[i] / (total - w[j]);
    expect_frequency(counts[i], kRounds, p, "client " + std::to_string(i));
  }
  // K = 1: exactly proportional to the weights.
  fl.clients_per_round = 1;
  const std::vector<int64_t> one = selection_counts(fl, w, kRounds);
  for (size_t i = 0; i < w.size(); ++i)
    expect_frequency(one[i], kRounds, w[i] / total, "K=1 client " + std::to_string(i));
}

TEST(FederatedPlan, SelectionIsSeededPerRound) {
  FlConfig fl;
  fl.clients_per_round = 4;
  const std::vector<double> samples(20, 1.0);
  const FaultSchedule faults(FaultConfig{}, identity_nodes(20));
  const RoundPlanner a(fl, 9, samples, 1, faults), b(fl, 9, samples, 1, faults), other(fl, 10, samples, 1, faults);
  int differ = 0;
  for (int r = 0; r < 50; ++r) {
    const auto pa = a.plan(r, 0.0).selected, pb = b.plan(r, 0.0).selected, po = other.plan(r, 0.0).selected;
    ASSERT_EQ(pa.size(), 4u);
    for (size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(pa[i].client, pb[i].client);
    for (size_t i = 1; i < pa.size(); ++i) EXPECT_LT(pa[i - 1].client, pa[i].client);  // ascending ids
    differ += pa[0].client != po[0].client || pa[1].client != po[1].client;
  }
  EXPECT_GT(differ, 25);
}

TEST(FederatedPlan, OvercommitAndStragglerCounts) {
  EXPECT_EQ(overcommitted_count(10, 0.3, 100), 13);  // not 14: 10·1.3 is 13.000000000000002 in binary
  EXPECT_EQ(overcommitted_count(10, 0.0, 100), 10);
  EXPECT_EQ(overcommitted_count(10, 0.25, 100), 13);  // ⌈12.5⌉
  EXPECT_EQ(overcommitted_count(10, 1.0, 15), 15);
  // The FedProx reference keeps round(K·(1 − drop)) clients: 10 → 1 at 90 %, 5 at 50 %.
  EXPECT_EQ(straggler_count(10, 0.9), 9);
  EXPECT_EQ(straggler_count(10, 0.5), 5);
  EXPECT_EQ(straggler_count(10, 0.0), 0);
}

TEST(FederatedPlan, ProtocolStragglersRunOneToEMinusOneEpochs) {
  FlConfig fl;
  fl.clients_per_round = 10;
  fl.local_epochs = 20;
  fl.straggler_fraction = 0.9;
  const std::vector<double> samples(30, 95.0);  // ⌈95/10⌉ = 10 steps per epoch
  const FaultSchedule faults(FaultConfig{}, identity_nodes(30));
  const RoundPlanner planner(fl, 3, samples, 10, faults);
  EXPECT_EQ(planner.full_steps(0), 200);
  std::vector<int64_t> by_epochs(20, 0);
  int64_t stragglers = 0;
  const int rounds = 4000;
  for (int r = 0; r < rounds; ++r) {
    int in_round = 0;
    for (const ClientAssignment& a : planner.plan(r, 0.0).selected) {
      if (!a.straggler) {
        EXPECT_EQ(a.local_steps, 200);
        continue;
      }
      ++in_round;
      ASSERT_EQ(a.local_steps % 10, 0);
      const int64_t epochs = a.local_steps / 10;
      ASSERT_GE(epochs, 1);
      ASSERT_LE(epochs, 19);
      ++by_epochs[epochs];
    }
    EXPECT_EQ(in_round, 9);
    stragglers += in_round;
  }
  for (int e = 1; e <= 19; ++e) expect_frequency(by_epochs[e], stragglers, 1.0 / 19, "epochs " + std::to_string(e));
}

TEST(FederatedPlan, AvailabilityDrawsTraceWindowsAndFaults) {
  FlConfig fl;
  fl.availability = 0.3;
  const std::vector<double> samples(8, 1.0);
  FaultConfig fc;
  fc.events = {{FaultTarget::Worker, 2, 5.0, 7.0}, {FaultTarget::Link, 3, 6.0, kNever}};
  const FaultSchedule faults(fc, identity_nodes(8));
  fl.availability_trace = parse_availability_trace("4: 0s to 10s, 20s to 30s; 5: from 15s", 8);
  const RoundPlanner planner(fl, 11, samples, 1, faults);
  int64_t online = 0;
  for (int r = 0; r < kRounds; ++r) online += planner.available(0, r, 0.0);
  expect_frequency(online, kRounds, 0.3, "availability");

  FlConfig always;
  always.availability_trace = fl.availability_trace;
  const RoundPlanner p(always, 11, samples, 1, faults);
  EXPECT_TRUE(p.available(4, 0, 9.5));
  EXPECT_FALSE(p.available(4, 0, 10.0));
  EXPECT_FALSE(p.available(5, 0, 14.0));
  EXPECT_TRUE(p.available(5, 0, 1e9));
  EXPECT_FALSE(p.available(2, 0, 6.0));  // host down
  EXPECT_TRUE(p.available(2, 0, 7.0));
  EXPECT_FALSE(p.available(3, 0, 6.5));  // link down
  EXPECT_EQ(p.lost_at(4, 1.0), 10.0);
  EXPECT_EQ(p.lost_at(2, 1.0), 5.0);
  EXPECT_EQ(p.lost_at(3, 1.0), 6.0);
  EXPECT_EQ(p.lost_at(0, 1.0), kNever);
  EXPECT_EQ(p.next_availability_change(10.5), 15.0);
}

TEST(FederatedPlan, SecureAggregationFormula) {
  const SecureAggregationCost cost(SecureAggregationConfig{});
  EXPECT_EQ(cost.headroom_bits(1), 0);
  EXPECT_EQ(cost.headroom_bits(4), 2);
  EXPECT_EQ(cost.headroom_bits(5), 3);
  EXPECT_EQ(cost.headroom_bits(1024), 10);
  // n = 10 clients, 8 survivors, m = 1000, one vector: t = 6, h = 4 bits → 1 byte per element.
  const SecureAggregationBytes b = cost.bytes(10, 8, 1000, 1);
  EXPECT_EQ(b.setup_up, 64u + 9u * 100u);
  EXPECT_EQ(b.setup_down, 10u * 68u + 9u * 100u);
  EXPECT_EQ(b.masked_extra, 1000u);
  EXPECT_EQ(b.survivors_down, 32u);
  EXPECT_EQ(b.unmask_up, 9u * 36u);
  EXPECT_NEAR(cost.server_seconds(10, 8, 1000, 1), 10 * 36 * 1e-7 + 2 * 8 * 5e-5 + 1000.0 * (8 + 16) / 2.5e8, 1e-15);
  EXPECT_NEAR(cost.client_seconds(10, 1000, 2), 18 * 5e-5 + 2 * 10 * 6 * 1e-7 + 2 * 1000.0 * 10 / 2.5e8, 1e-15);
}

TEST(FederatedPlan, KeysAreCheckedAgainstTheRestOfTheScenario) {
  const std::string fl = "[cluster]\nworkers = 4\n[training]\nstrategy = federated\noptimizer = sgd\n[fl]\n";
  EXPECT_EQ(config_error_of(fl + "clients_per_round = 4\n"), "");
  EXPECT_NE(config_error_of(fl + "clients_per_round = 5\n").find("fl.clients_per_round"), std::string::npos);
  EXPECT_NE(config_error_of(fl + "prox_mu = 1\n").find("fl.prox_mu"), std::string::npos);
  EXPECT_NE(config_error_of(fl + "local_steps_by_client = 1, 10\n").find("fl.local_steps_by_client"),
            std::string::npos);
  EXPECT_NE(config_error_of(fl + "availability_trace = 7: 0s to 1s\n").find("fl.availability_trace"),
            std::string::npos);
  EXPECT_NE(config_error_of(fl + "availability_trace = 1: 5s to 1s\n").find("empty"), std::string::npos);
  // A misspelt "to" is named as a window's form, not read as a unit ("unknown unit 's until 5s'"); "from 1s to
  // 5s" is a window.
  EXPECT_NE(config_error_of(fl + "availability_trace = 3: from 1s until 5s\n").find("is not '<start> to <end>'"),
            std::string::npos);
  const std::vector<ClientAvailability> from_to = parse_availability_trace("3: from 1s to 5s", 4);
  ASSERT_EQ(from_to.size(), 1u);
  ASSERT_EQ(from_to[0].windows.size(), 1u);
  EXPECT_DOUBLE_EQ(from_to[0].windows[0].from, 1.0);
  EXPECT_DOUBLE_EQ(from_to[0].windows[0].to, 5.0);
  EXPECT_NE(config_error_of(fl + "straggler_fraction = 0.5\nstraggler_policy = partial\nlocal_epochs = 1\n")
                .find("fl.local_epochs"),
            std::string::npos);
  EXPECT_NE(config_error_of("[cluster]\nworkers = 4\n[training]\nstrategy = federated\noptimizer = adam\n")
                .find("training.optimizer"),
            std::string::npos);
  // Federated learning survives failures: a lost client is a straggler.
  EXPECT_EQ(config_error_of(fl + "[faults]\nevents = worker 1 down at 1s\n"), "");
  // The same keys do not bother other strategies.
  EXPECT_EQ(config_error_of("[cluster]\nworkers = 4\n[fl]\nclients_per_round = 9\n"), "");
}

}  // namespace
}  // namespace dtsim::sim
