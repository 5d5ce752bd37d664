// Concurrent analytic collectives share their ranks' links: hand-drawn processor-sharing timelines for
// SharedLinks, and an all-gather and a reduce-scatter started together at the analytic fidelity against the
// closed form (latencies apart, the link-bound parts one after the other) and against the aggregated fidelity's
// flows, which SimGrid shares by max-min.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/world/build_platform.hpp"
#include "sim/world/shared_links.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

struct Call {
  double start;        // s
  double seconds;      // the links' time alone
  bool all_ranks = true;  // on both hosts; else on the first alone (another rank set)
};

// When each call ends, calls started at `start` on a fresh SharedLinks.
std::vector<double> ends(const std::vector<Call>& calls) {
  return dtsim::testing::from_bytes<double>(dtsim::testing::run_in_child([&] {
    auto engine = create_engine({NetworkModel::Cm02, false});
    const Platform p = build_star(2, 1e12, FabricSpec{"ideal", 25e9, 1e-6, 0.0, 1.0});
    SharedLinks links;
    std::vector<double> out(calls.size(), -1);
    const std::vector<sg4::Host*> both = p.workers, first = {p.workers[0]};
    for (size_t i = 0; i < calls.size(); ++i)
      sg4::Actor::create("call" + std::to_string(i), p.workers[0], [&, i] {
        sg4::this_actor::sleep_for(calls[i].start);
        links.serve(calls[i].all_ranks ? both : first, calls[i].seconds);
        out[i] = sg4::Engine::get_clock();
      });
    engine->run();
    return dtsim::testing::to_bytes(out);
  }));
}

TEST(SharedLinks, TwoEqualCallsStartedTogetherEndTogetherAtTwiceTheTime) {
  const auto t = ends({{0, 1}, {0, 1}});
  EXPECT_NEAR(t[0], 2.0, 1e-12);
  EXPECT_NEAR(t[1], 2.0, 1e-12);
}

TEST(SharedLinks, TheShortCallLeavesAndTheLongOneSpeedsUp) {
  // Both at half rate until the 0.5 s call has had its 0.5 s (t = 1); the 1 s call then has 0.5 s left, alone.
  const auto t = ends({{0, 1}, {0, 0.5}});
  EXPECT_NEAR(t[1], 1.0, 1e-12);
  EXPECT_NEAR(t[0], 1.5, 1e-12);
}

TEST(SharedLinks, ALateCallSlowsTheFirstFromWhenItStarts) {
  // 0 to 0.5: the first alone (0.5 s served). 0.5 to 1.5: both at half, the first's last 0.5 s. Then the second,
  // 0.5 s served, has 0.5 s left alone: it ends at 2.
  const auto t = ends({{0, 1}, {0.5, 1}});
  EXPECT_NEAR(t[0], 1.5, 1e-12);
  EXPECT_NEAR(t[1], 2.0, 1e-12);
  // Three calls: 0 to 1 two share (0.5 each served), the third joins at 1; the first two need 0.5 more at a
  // third each (t = 2.5), then the third, with 0.5 served, ends alone at 3.
  const auto three = ends({{0, 1}, {0, 1}, {1, 1}});
  EXPECT_NEAR(three[0], 2.5, 1e-12);
  EXPECT_NEAR(three[1], 2.5, 1e-12);
  EXPECT_NEAR(three[2], 3.0, 1e-12);
}

TEST(SharedLinks, CallsOnOtherRanksDoNotShare) {
  const auto t = ends({{0, 1}, {0, 1, false}});
  EXPECT_NEAR(t[0], 1.0, 1e-12);
  EXPECT_NEAR(t[1], 1.0, 1e-12);
}

// An all-gather and a reduce-scatter of `bytes` each, over `ranks` workers of a star, started at once; returns
// {the all-gather's end, the reduce-scatter's end, one alone}.
std::vector<double> concurrent_rings(Fidelity fidelity, int ranks, uint64_t bytes) {
  return dtsim::testing::from_bytes<double>(dtsim::testing::run_in_child([&] {
    auto engine = create_engine({NetworkModel::Cm02, false});
    const FabricSpec fabric{"ideal", 25e9, 1e-6, 0.0, 1.0};
    const Platform p = build_star(ranks, 1e12, fabric);
    install_fabric_calibration(*engine, fabric);
    auto gather = make_collective(CollectiveKind::AllGather, Algorithm::Ring, fidelity, p, "gather");
    auto scatter = make_collective(CollectiveKind::ReduceScatter, Algorithm::Ring, fidelity, p, "scatter");
    std::vector<double> out(3, 0);
    for (int r = 0; r < ranks; ++r) {
      sg4::Actor::create("g" + std::to_string(r), p.workers[r], [&, r] {
        gather->run(r, bytes);
        if (r == 0) out[0] = sg4::Engine::get_clock();
      });
      sg4::Actor::create("s" + std::to_string(r), p.workers[r], [&, r] {
        scatter->run(r, bytes);
        if (r == 0) out[1] = sg4::Engine::get_clock();
      });
    }
    engine->run();
    out[2] = gather->predicted_seconds(bytes);
    return dtsim::testing::to_bytes(out);
  }));
}

TEST(SharedLinks, ConcurrentAnalyticRingsShareTheLinksAsFlowsWould) {
  // 4 ranks, 64 MB each way: a ring moves (N − 1)/N of it per rank in N − 1 steps of α = 2 µs (two 1 µs links).
  const int n = 4;
  const uint64_t bytes = 64'000'000;
  const double latency = (n - 1) * 2e-6, links = (n - 1) * (bytes / double(n)) / 25e9;
  const auto analytic = concurrent_rings(Fidelity::Analytic, n, bytes);
  EXPECT_NEAR(analytic[2], latency + links, 1e-3 * (latency + links)) << "one ring alone";
  // Together: each its latencies, then the two link-bound parts at half rate: both end one link-bound part
  // later than a ring alone.
  EXPECT_NEAR(analytic[0], analytic[2] + links, 1e-12);
  EXPECT_NEAR(analytic[1], analytic[2] + links, 1e-12);
  // The aggregated fidelity's flows share the star's links by max-min: the same within 1 %.
  const auto aggregated = concurrent_rings(Fidelity::Aggregated, n, bytes);
  EXPECT_NEAR(aggregated[0], analytic[0], 1e-2 * analytic[0]);
  EXPECT_NEAR(aggregated[1], analytic[1], 1e-2 * analytic[1]);
}

}  // namespace
}  // namespace dtsim::sim
