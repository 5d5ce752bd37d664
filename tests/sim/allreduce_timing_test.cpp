// The simulated ring allreduce against its alpha-beta closed form on a contention-free star.
#include <gtest/gtest.h>

#include "sim/collectives/collective.hpp"
#include "sim/world/build_platform.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

struct Fabric {
  const char* name;
  double bandwidth, link_latency, switch_latency, efficiency;
};

// Simulates one allreduce of `bytes` over `ranks` workers; returns {simulated time, route latency, bytes}.
std::vector<double> simulate_ring(int ranks, uint64_t bytes, const Fabric& f) {
  const std::string out = dtsim::testing::run_in_child([&] {
    auto engine = create_engine({NetworkModel::Cm02, false});
    const FabricSpec spec{f.name, f.bandwidth, f.link_latency, f.switch_latency, f.efficiency};
    const Platform p = build_star(ranks, 1e12, spec);
    install_fabric_calibration(*engine, spec);
    auto ring = make_collective(CollectiveKind::Allreduce, Algorithm::Ring, Fidelity::Stepwise, p, "test");
    for (int r = 0; r < ranks; ++r)
      sg4::Actor::create("rank" + std::to_string(r), p.workers[r], [&ring, r, bytes] { ring->run(r, bytes); });
    engine->run();
    const double alpha = ranks > 1 ? route_latency(p.workers[0], p.workers[1]) : 0.0;
    return dtsim::testing::to_bytes(
        std::vector<double>{sg4::Engine::get_clock(), alpha, static_cast<double>(ring->bytes_sent())});
  });
  return dtsim::testing::from_bytes<double>(out);
}

class RingTiming : public ::testing::TestWithParam<std::tuple<int, int>> {};

const Fabric kFabrics[] = {
    {"ideal 25 GB/s, 1 us links", 25e9, 1e-6, 0.0, 1.0},
    {"HDR-like: 200 Gb/s, 0.6 us links, 130 ns switch, 96 %", 25e9, 0.6e-6, 130e-9, 0.96},
};

TEST_P(RingTiming, MatchesTwoNMinusOneAlphaPlusSOverNB) {
  const auto [n, fabric_index] = GetParam();
  const Fabric& f = kFabrics[fabric_index];
  const uint64_t bytes = 64'000'000;
  const std::vector<double> r = simulate_ring(n, bytes, f);
  const double alpha = 2 * f.link_latency + f.switch_latency;
  const double effective_bandwidth = f.bandwidth * f.efficiency;
  const double expected = 2.0 * (n - 1) * (alpha + static_cast<double>(bytes) / (n * effective_bandwidth));
  EXPECT_NEAR(r[1], alpha, 1e-15) << "route latency";
  EXPECT_NEAR(r[0], expected, 1e-3 * expected) << f.name << ", N=" << n;
  EXPECT_EQ(r[2], 2.0 * (n - 1) * static_cast<double>(bytes));
}

INSTANTIATE_TEST_SUITE_P(Ranks, RingTiming,
                         ::testing::Combine(::testing::Values(2, 3, 8, 64), ::testing::Values(0, 1)),
                         [](const auto& info) {
                           return "N" + std::to_string(std::get<0>(info.param)) + "_fabric" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(RingAllreduce, SingleRankTakesNoTime) {
  const std::vector<double> r = simulate_ring(1, 1'000'000, kFabrics[0]);
  EXPECT_EQ(r[0], 0.0);
  EXPECT_EQ(r[2], 0.0);
}

}  // namespace
}  // namespace dtsim::sim
