// Every collective, all-to-all included, simulated step by step on a contention-free star (CM02, cross-traffic
// off), against its α-β closed form written out here independently of the library; and the bytes each
// algorithm sends.
#include <gtest/gtest.h>

#include "tests/sim/collectives_support.hpp"

namespace dtsim::sim {
namespace {

using testing::Case;
using testing::Outcome;

// 15 MiB = 2^20 · 3 · 5: every chunk count below divides it (ring: N = 2, 3, 5, 8, 64; halving-doubling:
// p ≤ 64; the chain: 30 chunks of 512 KiB; each tree: 15 chunks of 512 KiB).
constexpr uint64_t kLarge = 15ull << 20;
// 3840 B = 2^8 · 3 · 5: latency-bound, one pipeline chunk, every ring and halving chunk still whole.
constexpr uint64_t kSmall = 3840;

struct Expected {
  double seconds;
  double bytes;
};

int chunks_of(uint64_t bytes) {
  const uint64_t k = (bytes + (512 << 10) - 1) / (512 << 10);
  return static_cast<int>(std::clamp<uint64_t>(k, 1, 128));
}

Expected closed_form(CollectiveKind kind, Algorithm algorithm, int n, uint64_t bytes, double a, double b) {
  const double s = static_cast<double>(bytes);
  switch (kind) {
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllGather: return {(n - 1) * (a + s / (n * b)), (n - 1) * s};
    case CollectiveKind::Broadcast:
    case CollectiveKind::Reduce: {
      const double k = chunks_of(bytes);
      return {(n - 2 + k) * (a + s / (k * b)), (n - 1) * s};
    }
    case CollectiveKind::AllToAll:  // the N−1 blocks of S/N share the rank's own link
      return {a + (n - 1) * (s / n) / b, (n - 1) * s};
    case CollectiveKind::Allreduce: break;
  }
  switch (algorithm) {
    case Algorithm::Ring: return {2.0 * (n - 1) * (a + s / (n * b)), 2.0 * (n - 1) * s};
    case Algorithm::HalvingDoubling: {
      int p = 1, levels = 0;
      for (; 2 * p <= n; p *= 2) ++levels;
      const double fold = n == p ? 0.0 : 2.0 * (a + s / b);
      return {2.0 * levels * a + 2.0 * (p - 1) / p * s / b + fold, 2.0 * (p - 1) * s + 2.0 * (n - p) * s};
    }
    case Algorithm::DoubleBinaryTree: {
      const int k = chunks_of(bytes - bytes / 2);
      return {double_binary_tree_rounds(n, k) * (a + s / (2.0 * k * b)), 2.0 * (n - 1) * s};
    }
    case Algorithm::Hierarchical:
    case Algorithm::Direct:
    case Algorithm::Auto: break;
  }
  return {0.0, 0.0};
}

using Param = std::tuple<CollectiveKind, Algorithm, int>;
class StepwiseMatchesClosedForm : public ::testing::TestWithParam<Param> {};

TEST_P(StepwiseMatchesClosedForm, WithinHalfAPercent) {
  const auto [kind, algorithm, n] = GetParam();
  for (const uint64_t bytes : {kLarge, kSmall}) {
    const Outcome o = testing::simulate_on_star({kind, algorithm, Fidelity::Stepwise, n, bytes, {}});
    const AlphaBeta link = testing::star_link(testing::hdr_fabric());
    EXPECT_NEAR(o.alpha, link.alpha, 1e-15);
    const Expected e = closed_form(kind, algorithm, n, bytes, link.alpha, link.bandwidth);
    EXPECT_NEAR(o.seconds, e.seconds, 5e-3 * e.seconds) << bytes << " bytes";
    EXPECT_NEAR(o.predicted, e.seconds, 1e-9 * e.seconds) << "the library's own closed form";
    EXPECT_EQ(o.bytes_sent, e.bytes) << "bytes the simulated transfers carried";
    EXPECT_EQ(o.bytes_per_call, e.bytes) << "the byte accounting strategies report";
  }
}

std::vector<Param> all_cases() {
  std::vector<Param> cases;
  for (const auto& [kind, algorithm] : testing::flat_collectives())
    for (const int n : {2, 3, 5, 8, 64}) cases.push_back({kind, algorithm, n});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Collectives, StepwiseMatchesClosedForm, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) {
                           return testing::case_name(std::get<0>(info.param), std::get<1>(info.param),
                                                     std::get<2>(info.param));
                         });

TEST(StepwiseMatchesClosedForm, BroadcastFromAnotherRoot) {
  Case c{CollectiveKind::Broadcast, Algorithm::Ring, Fidelity::Stepwise, 5, kLarge, {}};
  c.options.root = 3;
  const Outcome o = testing::simulate_on_star(c);
  const AlphaBeta link = testing::star_link(testing::hdr_fabric());
  const Expected e = closed_form(c.kind, c.algorithm, c.ranks, c.bytes, link.alpha, link.bandwidth);
  EXPECT_NEAR(o.seconds, e.seconds, 5e-3 * e.seconds);
}

TEST(StepwiseMatchesClosedForm, UnevenChunksStayWithinAByteOfTheFormula) {
  const uint64_t bytes = 1'000'003;  // prime: no chunk count divides it
  for (const Algorithm a : {Algorithm::Ring, Algorithm::DoubleBinaryTree, Algorithm::HalvingDoubling}) {
    const Outcome o = testing::simulate_on_star({CollectiveKind::Allreduce, a, Fidelity::Stepwise, 5, bytes, {}});
    const AlphaBeta link = testing::star_link(testing::hdr_fabric());
    const Expected e = closed_form(CollectiveKind::Allreduce, a, 5, bytes, link.alpha, link.bandwidth);
    EXPECT_NEAR(o.seconds, e.seconds, 5e-3 * e.seconds) << to_string(a);
    EXPECT_EQ(o.bytes_sent, e.bytes) << to_string(a);
  }
}

TEST(StepwiseMatchesClosedForm, OneRankTakesNoTimeAndSendsNothing) {
  for (const Algorithm a : {Algorithm::Ring, Algorithm::DoubleBinaryTree, Algorithm::HalvingDoubling}) {
    const Outcome o = testing::simulate_on_star({CollectiveKind::Allreduce, a, Fidelity::Stepwise, 1, kLarge, {}});
    EXPECT_EQ(o.seconds, 0.0);
    EXPECT_EQ(o.bytes_sent, 0.0);
  }
}

// The double binary tree's round count, from its slot schedule, against the formula the README states.
TEST(DoubleBinaryTree, RoundsFollowTheStatedFormula) {
  for (int n = 2; n <= 300; ++n)
    for (const int k : {2, 3, 8, 15, 64}) {
      int depth = 0;
      while ((2 << depth) <= n) ++depth;
      const bool power_of_two = (n & (n - 1)) == 0;
      const int expected = n == 2 ? 2 * k : 4 * (k + depth - 1) - (power_of_two ? 2 : 0);
      ASSERT_EQ(double_binary_tree_rounds(n, k), expected) << "N=" << n << " k=" << k;
    }
}

}  // namespace
}  // namespace dtsim::sim
