// The cheaper fidelities against the exact one: aggregated within 2 % of stepwise without other traffic,
// analytic the closed form on a star (and stepwise's time on multi-GPU nodes and fat-trees, below); auto's choice; and aggregated flows still feeling other traffic.
#include <gtest/gtest.h>

#include "tests/sim/collectives_support.hpp"

namespace dtsim::sim {
namespace {

using testing::Case;
using testing::Outcome;

constexpr uint64_t kSizes[] = {3840, 15ull << 20};

using Param = std::tuple<CollectiveKind, Algorithm, int>;
class Fidelities : public ::testing::TestWithParam<Param> {};

TEST_P(Fidelities, AggregatedWithinTwoPercentOfStepwise) {
  const auto [kind, algorithm, n] = GetParam();
  for (const uint64_t bytes : kSizes) {
    const Outcome step = testing::simulate_on_star({kind, algorithm, Fidelity::Stepwise, n, bytes, {}});
    const Outcome agg = testing::simulate_on_star({kind, algorithm, Fidelity::Aggregated, n, bytes, {}});
    EXPECT_NEAR(agg.seconds, step.seconds, 0.02 * step.seconds) << bytes << " bytes";
    EXPECT_EQ(agg.bytes_sent, step.bytes_sent) << "the same bytes, in fewer flows";
  }
}

// Exactly up to rounding: schedules timed by replay (tree, halving-doubling, the chain) add the same terms
// one transfer at a time.
TEST_P(Fidelities, AnalyticIsTheClosedForm) {
  const auto [kind, algorithm, n] = GetParam();
  for (const uint64_t bytes : kSizes) {
    const Outcome o = testing::simulate_on_star({kind, algorithm, Fidelity::Analytic, n, bytes, {}});
    CollectiveOptions options;
    options.bandwidth_efficiency = testing::hdr_fabric().efficiency;
    const double expected = closed_form_seconds(kind, algorithm, n, bytes, testing::star_link(testing::hdr_fabric()), options);
    EXPECT_NEAR(o.seconds, expected, 1e-12 * expected) << bytes << " bytes";
    EXPECT_EQ(o.bytes_sent, o.bytes_per_call) << "analytic still accounts for the bytes";
  }
}

std::vector<Param> cases() {
  std::vector<Param> out;
  for (const auto& [kind, algorithm] : testing::flat_collectives())
    for (const int n : {2, 5, 8, 64}) out.push_back({kind, algorithm, n});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Collectives, Fidelities, ::testing::ValuesIn(cases()), [](const auto& info) {
  return testing::case_name(std::get<0>(info.param), std::get<1>(info.param), std::get<2>(info.param));
});

TEST(AutoFidelity, ThresholdsOnTheStepwiseFlowCount) {
  EXPECT_EQ(resolve_fidelity(Fidelity::Auto, kAutoMaxFlows, 10), Fidelity::Stepwise);
  EXPECT_EQ(resolve_fidelity(Fidelity::Auto, kAutoMaxFlows + 1, 10), Fidelity::Aggregated);
  EXPECT_EQ(resolve_fidelity(Fidelity::Auto, kAutoMaxFlows + 1, kAutoMaxFlows + 1), Fidelity::Analytic);
  EXPECT_EQ(resolve_fidelity(Fidelity::Stepwise, 1u << 30, 1u << 30), Fidelity::Stepwise);
  // 130 buckets a step (LLaMA-7B in 25 MB buckets) share the budget: a 64-rank ring reduce-scatter's 32,256
  // stepwise flows per call would be 4.2 million a step, so auto aggregates.
  EXPECT_EQ(resolve_fidelity(Fidelity::Auto, 32256, 128, 130), Fidelity::Aggregated);
  EXPECT_EQ(resolve_fidelity(Fidelity::Auto, 32256, 128, 1), Fidelity::Stepwise);
  EXPECT_EQ(resolve_fidelity(Fidelity::Auto, kAutoMaxFlows / 4, 10, 4), Fidelity::Stepwise);
  EXPECT_EQ(resolve_fidelity(Fidelity::Auto, kAutoMaxFlows / 4 + 1, kAutoMaxFlows, 4), Fidelity::Analytic);
  EXPECT_EQ(resolve_fidelity(Fidelity::Auto, 5, 5, 0), Fidelity::Stepwise);  // no calls counts as one
}

TEST(AutoFidelity, ARunsNumericsCapTheStepwiseBudget) {
  // 7 % of the numerics at 1.8e5 FLOPs per transfer: 1.8 GFLOP a step allows 700 transfers.
  EXPECT_EQ(numerics_stepwise_cap(1.8e9), 700u);
  EXPECT_EQ(numerics_stepwise_cap(1.8e9 - 1e7), 696u);
  EXPECT_EQ(numerics_stepwise_cap(0.0), 1u);  // never 0, which would mean "no cap"
  EXPECT_EQ(numerics_stepwise_cap(1e30), kAutoMaxFlows);
  EXPECT_EQ(resolve_fidelity(Fidelity::Auto, 1000, 10, 1, 1000), Fidelity::Stepwise);
  EXPECT_EQ(resolve_fidelity(Fidelity::Auto, 1001, 10, 1, 1000), Fidelity::Aggregated);
  EXPECT_EQ(resolve_fidelity(Fidelity::Auto, 250, 10, 4, 1000), Fidelity::Stepwise);  // shared by the calls
  EXPECT_EQ(resolve_fidelity(Fidelity::Auto, 251, 10, 4, 1000), Fidelity::Aggregated);
  // A cap above auto's own budget does not raise it, and an explicit fidelity ignores the cap.
  EXPECT_EQ(resolve_fidelity(Fidelity::Auto, kAutoMaxFlows + 1, 10, 1, 10 * kAutoMaxFlows), Fidelity::Aggregated);
  EXPECT_EQ(resolve_fidelity(Fidelity::Stepwise, 1001, 10, 1, 1000), Fidelity::Stepwise);
}

TEST(AutoFidelity, RingIsStepwiseUpTo274RanksThenAggregated) {
  // 2N(N−1) transfers per ring allreduce: 149 604 at N = 274, 150 700 at N = 275.
  const Outcome small = testing::simulate_on_star({CollectiveKind::Allreduce, Algorithm::Ring, Fidelity::Auto, 274, 1, {}});
  const Outcome large = testing::simulate_on_star({CollectiveKind::Allreduce, Algorithm::Ring, Fidelity::Auto, 275, 1, {}});
  EXPECT_EQ(small.resolved_fidelity, static_cast<double>(Fidelity::Stepwise));
  EXPECT_EQ(large.resolved_fidelity, static_cast<double>(Fidelity::Aggregated));
}

// A bulk flow from rank 0 to a server host shares rank 0's link for the whole allreduce: the flows of
// stepwise and aggregated both slow down; analytic, which has no flows, cannot see it.
std::vector<double> with_background(Fidelity fidelity) {
  const std::string out = dtsim::testing::run_in_child([&] {
    auto engine = testing::create_exact_engine();
    const FabricSpec fabric = testing::hdr_fabric();
    const Platform p = build_star(4, 1e12, fabric, /*servers=*/1);
    install_fabric_calibration(*engine, fabric);
    CollectiveOptions options;
    options.bandwidth_efficiency = fabric.efficiency;
    auto ar = make_collective(CollectiveKind::Allreduce, Algorithm::Ring, fidelity, p, "bg", options);
    double done = 0.0;
    for (int r = 0; r < 4; ++r)
      sg4::Actor::create("rank" + std::to_string(r), p.workers[r], [&, r] {
        ar->run(r, 64'000'000);
        done = std::max(done, sg4::Engine::get_clock());
      });
    sg4::Actor::create("background", p.workers[0], [&] {
      sg4::Comm::sendto(p.workers[0], p.servers[0], 1e9);  // far longer than the allreduce
    });
    engine->run();
    return dtsim::testing::to_bytes(std::vector<double>{done});
  });
  return dtsim::testing::from_bytes<double>(out);
}

TEST(AggregatedFidelity, SharesLinksWithOtherTraffic) {
  const AlphaBeta link = testing::star_link(testing::hdr_fabric());
  const double alone = 2.0 * 3 * (link.alpha + 64e6 / (4 * link.bandwidth));
  const double step = with_background(Fidelity::Stepwise).at(0);
  const double agg = with_background(Fidelity::Aggregated).at(0);
  const double analytic = with_background(Fidelity::Analytic).at(0);
  // Rank 0's uplink is split in two for the whole collective, so the ring runs at half speed.
  EXPECT_NEAR(step, 2.0 * alone, 0.02 * step);
  EXPECT_NEAR(agg, step, 0.02 * step);
  EXPECT_NEAR(analytic, alone, 1e-9 * alone);
}

}  // namespace
}  // namespace dtsim::sim
