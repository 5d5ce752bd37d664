// collective.algorithm = auto (auto_collective.hpp). With collective.tuner = fastest, for each call size it
// runs the candidate with the least predicted time. On a star every candidate's prediction is its α-β closed
// form, so the choice can be computed independently: tree (2⌈log2 N⌉-ish latency terms) wins small messages,
// the ring (bandwidth term 2(N−1)/N·S/B against the tree's 2·S/B) wins large ones. With collective.tuner =
// nccl it runs what NCCL's tuning model picks (nccl_choice, tested against NCCL's own output in
// nccl_tuning_test.cpp). Either way the simulated time of auto is the chosen algorithm's simulated time.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/collectives/auto_collective.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/collectives/nccl_tuning.hpp"
#include "sim/collectives/registry.hpp"
#include "tests/sim/collectives_support.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

using testing::Case;
using testing::create_exact_engine;
using testing::hdr_fabric;
using testing::simulate_on_star;
using testing::star_link;

constexpr int kRanks = 16;

std::vector<uint64_t> doubling_sizes(uint64_t from, uint64_t to) {
  std::vector<uint64_t> sizes;
  for (uint64_t s = from; s <= to; s *= 4) sizes.push_back(s);
  return sizes;
}

// What auto on a star of `ranks` picks for each size: the variant names, "|"-separated.
// The options of a star of single-GPU nodes on HDR, as a run would give them (collective_options).
CollectiveOptions star_options(const FabricSpec& fabric, Protocol protocol, CollectiveTuner tuner) {
  CollectiveOptions options;
  options.bandwidth_efficiency = fabric.efficiency;
  options.protocol = protocol;
  options.tuner = tuner;
  options.nic_bandwidth = fabric.bandwidth * fabric.efficiency;
  return options;
}

std::string auto_variants(CollectiveKind kind, int ranks, const std::vector<uint64_t>& sizes,
                          Protocol protocol = Protocol::None, CollectiveTuner tuner = CollectiveTuner::Fastest) {
  return dtsim::testing::run_in_child([&] {
    auto engine = create_exact_engine();
    const FabricSpec fabric = hdr_fabric();
    const Platform p = build_star(ranks, 1e12, fabric);
    install_fabric_calibration(*engine, fabric);
    auto collective =
        make_collective(kind, Algorithm::Auto, Fidelity::Stepwise, p, "auto", star_options(fabric, protocol, tuner));
    std::string out;
    for (const uint64_t s : sizes) out += collective->variant(s) + "|";
    return out;
  });
}

TEST(AutoAlgorithm, AllreducePicksTheAlgorithmWithTheSmallerClosedForm) {
  const std::vector<uint64_t> sizes = doubling_sizes(8, 256ull << 20);
  const AlphaBeta link = star_link(hdr_fabric());
  std::string expected;
  bool tree_seen = false, ring_seen = false;
  for (const uint64_t s : sizes) {
    CollectiveOptions options;
    const double ring = closed_form_seconds(CollectiveKind::Allreduce, Algorithm::Ring, kRanks, s, link, options);
    const double tree =
        closed_form_seconds(CollectiveKind::Allreduce, Algorithm::DoubleBinaryTree, kRanks, s, link, options);
    expected += std::string(tree < ring ? "tree" : "ring") + "|";
    (tree < ring ? tree_seen : ring_seen) = true;
  }
  // Both candidates win somewhere in 8 B – 256 MiB, so the comparison below exercises the choice.
  ASSERT_TRUE(tree_seen && ring_seen) << expected;
  EXPECT_EQ(auto_variants(CollectiveKind::Allreduce, kRanks, sizes), expected);
}

TEST(AutoAlgorithm, SmallAllreduceRunsTheTreeAndLargeTheRing) {
  EXPECT_EQ(auto_variants(CollectiveKind::Allreduce, kRanks, {8, 1ull << 30}), "tree|ring|");
}

TEST(AutoAlgorithm, SimulatedTimeIsTheChosenAlgorithmsTime) {
  for (const uint64_t bytes : {uint64_t{64}, uint64_t{4} << 20}) {
    Case c;
    c.ranks = kRanks;
    c.bytes = bytes;
    c.algorithm = Algorithm::Ring;
    const double ring = simulate_on_star(c).seconds;
    c.algorithm = Algorithm::DoubleBinaryTree;
    const double tree = simulate_on_star(c).seconds;
    c.algorithm = Algorithm::Auto;
    c.options.tuner = CollectiveTuner::Fastest;
    const testing::Outcome chosen = simulate_on_star(c);
    EXPECT_NEAR(chosen.seconds, std::min(ring, tree), 1e-9 * std::min(ring, tree)) << bytes << " B";
    EXPECT_DOUBLE_EQ(chosen.predicted, chosen.seconds) << bytes << " B (a star is contention-free)";
  }
}

// collective.tuner = nccl: auto runs the algorithm, and with collective.protocol = auto the protocol, that
// NCCL's tuning model picks for the platform (16 single-GPU nodes on HDR: NCCL's tree, a plain one, then the
// ring); with collective.protocol = none it still picks NCCL's algorithm, over every protocol NCCL could run.
TEST(AutoAlgorithm, NcclTunerRunsWhatNcclsModelPicks) {
  const std::vector<uint64_t> sizes = doubling_sizes(8, 1ull << 30);
  const FabricSpec fabric = hdr_fabric();
  std::vector<std::vector<int>> nodes;
  for (int r = 0; r < kRanks; ++r) nodes.push_back({r});
  const NcclTopology topology = nccl_topology(nodes, star_options(fabric, Protocol::Auto, CollectiveTuner::Nccl));
  std::string with_protocol, algorithm_only;
  for (const uint64_t s : sizes) {
    const std::optional<NcclEstimate> e =
        nccl_choice(CollectiveKind::Allreduce, s, topology, {Algorithm::Ring, Algorithm::DoubleBinaryTree},
                    {Protocol::LL, Protocol::LL128, Protocol::Simple});
    ASSERT_TRUE(e);
    const std::string algorithm = e->algorithm == Algorithm::Ring ? "ring" : "tree";
    with_protocol += algorithm + "/" + to_string(e->protocol) + "|";
    algorithm_only += algorithm + "|";
  }
  ASSERT_NE(algorithm_only.find("tree"), std::string::npos) << algorithm_only;
  ASSERT_NE(algorithm_only.find("ring"), std::string::npos) << algorithm_only;
  EXPECT_EQ(auto_variants(CollectiveKind::Allreduce, kRanks, sizes, Protocol::Auto, CollectiveTuner::Nccl),
            with_protocol);
  EXPECT_EQ(auto_variants(CollectiveKind::Allreduce, kRanks, sizes, Protocol::None, CollectiveTuner::Nccl),
            algorithm_only);
  // An explicit algorithm with collective.protocol = auto takes NCCL's protocol for that algorithm.
  const std::string ring_only = dtsim::testing::run_in_child([&] {
    auto engine = create_exact_engine();
    const Platform p = build_star(kRanks, 1e12, fabric);
    install_fabric_calibration(*engine, fabric);
    auto ring = make_collective(CollectiveKind::Allreduce, Algorithm::Ring, Fidelity::Stepwise, p, "ring",
                                star_options(fabric, Protocol::Auto, CollectiveTuner::Nccl));
    std::string out;
    for (const uint64_t s : sizes) out += ring->variant(s) + "|";
    return out;
  });
  std::string expected_ring;
  for (const uint64_t s : sizes)
    expected_ring += std::string("ring/") +
                     to_string(nccl_choice(CollectiveKind::Allreduce, s, topology, {Algorithm::Ring},
                                           {Protocol::LL, Protocol::LL128, Protocol::Simple})
                                   ->protocol) +
                     "|";
  EXPECT_EQ(ring_only, expected_ring);
}

TEST(AutoAlgorithm, NcclTunersChoiceIsSimulatedAsThatAlgorithm) {
  for (const uint64_t bytes : {uint64_t{64}, uint64_t{256} << 20}) {
    Case c;
    c.ranks = kRanks;
    c.bytes = bytes;
    c.options = star_options(hdr_fabric(), Protocol::Auto, CollectiveTuner::Nccl);
    c.algorithm = Algorithm::Auto;
    const testing::Outcome chosen = simulate_on_star(c);
    std::vector<std::vector<int>> nodes;
    for (int r = 0; r < kRanks; ++r) nodes.push_back({r});
    c.algorithm = nccl_choice(CollectiveKind::Allreduce, bytes, nccl_topology(nodes, c.options),
                              {Algorithm::Ring, Algorithm::DoubleBinaryTree},
                              {Protocol::LL, Protocol::LL128, Protocol::Simple})
                      ->algorithm;
    const testing::Outcome alone = simulate_on_star(c);
    EXPECT_NEAR(chosen.seconds, alone.seconds, 1e-9 * alone.seconds) << bytes << " B";
  }
}

TEST(AutoAlgorithm, OtherCollectivesRunTheRingAndAllToAllRunsDirectSends) {
  EXPECT_EQ(auto_variants(CollectiveKind::ReduceScatter, 8, {8, 1 << 20}), "ring|ring|");
  EXPECT_EQ(auto_variants(CollectiveKind::AllGather, 8, {8, 1 << 20}), "ring|ring|");
  EXPECT_EQ(auto_variants(CollectiveKind::Broadcast, 8, {8}), "ring|");
  EXPECT_EQ(auto_variants(CollectiveKind::AllToAll, 8, {8, 1 << 20}), "direct|direct|");
  EXPECT_EQ(auto_candidates(CollectiveKind::Allreduce),
            (std::vector<Algorithm>{Algorithm::Ring, Algorithm::DoubleBinaryTree}));
}

TEST(AutoAlgorithm, WithAProtocolModelTheChoiceSpansAlgorithmsAndProtocols) {
  const std::string v = auto_variants(CollectiveKind::Allreduce, kRanks, {8, 1ull << 30}, Protocol::Auto);
  EXPECT_EQ(v.substr(0, 5), "tree/") << v;
  EXPECT_NE(v.find("|ring/"), std::string::npos) << v;
}

// The candidates run at one fidelity: at N = 280, fidelity auto resolves the ring to aggregated (its
// stepwise run would simulate 2·279·280 = 156 240 transfers > 150 000) and the double binary tree to
// stepwise (two trees of 279 edges, each edge 128 chunks up and 128 down at 1 GiB: 142 848); auto runs both
// aggregated, so a size's choice never changes the fidelity.
TEST(AutoAlgorithm, CandidatesShareTheCoarsestFidelity) {
  const std::string out = dtsim::testing::run_in_child([] {
    auto engine = create_exact_engine();
    const FabricSpec fabric = hdr_fabric();
    const Platform p = build_star(280, 1e12, fabric);
    install_fabric_calibration(*engine, fabric);
    const auto ring = make_collective(CollectiveKind::Allreduce, Algorithm::Ring, Fidelity::Auto, p, "r");
    const auto tree = make_collective(CollectiveKind::Allreduce, Algorithm::DoubleBinaryTree, Fidelity::Auto, p, "t");
    const auto chooser = make_collective(CollectiveKind::Allreduce, Algorithm::Auto, Fidelity::Auto, p, "a");
    return std::string(to_string(ring->fidelity())) + " " + to_string(tree->fidelity()) + " " +
           to_string(chooser->fidelity());
  });
  EXPECT_EQ(out, "aggregated stepwise aggregated");
}

}  // namespace
}  // namespace dtsim::sim
