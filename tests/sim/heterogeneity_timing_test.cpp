// Slow hosts, link bandwidth profiles and background flows against closed forms, each simulation in a
// forked child (one SimGrid engine per process).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "sim/world/heterogeneity.hpp"
#include "sim/world/build_platform.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

constexpr double kSpeed = 1e12;     // FLOP/s of every host
constexpr double kBandwidth = 1e9;  // B/s of every link
constexpr double kLinkLatency = 1e-6;
constexpr double kRouteLatency = 2 * kLinkLatency;  // worker → switch → worker
const FabricSpec kFabric{"test", kBandwidth, kLinkLatency, 0.0, 1.0};

// Builds a star of `workers`, applies `h`, lets `spawn` create actors that append what they measure to the
// result, runs, and appends the final clock. In a child process.
std::vector<double> simulate(int workers, const HeterogeneityConfig& h,
                             const std::function<void(const Platform&, std::vector<double>&)>& spawn) {
  return dtsim::testing::from_bytes<double>(dtsim::testing::run_in_child([&] {
    auto engine = create_engine({NetworkModel::Cm02, false});
    const Platform p = build_star(workers, kSpeed, kFabric);
    RunConfig cfg;
    cfg.workers = workers;
    cfg.seed = 1;
    cfg.heterogeneity = h;
    const HeterogeneityRuntime runtime = apply_heterogeneity(*engine, p, cfg);
    std::vector<double> out;
    spawn(p, out);
    engine->run();
    out.push_back(sg4::Engine::get_clock());
    return dtsim::testing::to_bytes(out);
  }));
}

// When `bytes` have crossed a route whose rate is piecewise constant (rate[i].second from rate[i].first on,
// times ascending, the first at 0), bytes flowing from `start` on.
double finish_time(double bytes, double start, const std::vector<std::pair<double, double>>& rate) {
  double t = start;
  for (size_t i = 0; i < rate.size(); ++i) {
    const double end = i + 1 < rate.size() ? rate[i + 1].first : INFINITY;
    if (end <= t) continue;
    const double can = (end - t) * rate[i].second;
    if (can >= bytes) return t + bytes / rate[i].second;
    bytes -= can;
    t = end;
  }
  return INFINITY;
}

void expect_relative(double actual, double expected, double tolerance, const std::string& what) {
  EXPECT_LE(std::fabs(actual - expected), tolerance * std::fabs(expected))
      << what << ": " << actual << " vs " << expected << " (relative " << (actual - expected) / expected << ")";
}

TEST(SlowWorkers, HalfSpeedHostTakesTwiceTheComputeTime) {
  HeterogeneityConfig h;
  h.stragglers.slow_workers = {{1, 0.5}, {2, 0.3}};
  const double flops = 3e12;
  const auto r = simulate(3, h, [&](const Platform& p, std::vector<double>& out) {
    out.resize(6);
    for (int w = 0; w < 3; ++w)
      sg4::Actor::create("w" + std::to_string(w), p.workers[w], [&out, w, flops] {
        sg4::this_actor::execute(flops);
        out[2 * w] = sg4::Engine::get_clock();
        out[2 * w + 1] = sg4::this_actor::get_host()->get_available_speed();
      });
  });
  expect_relative(r[0], flops / kSpeed, 1e-12, "nominal host");
  expect_relative(r[2], 2 * flops / kSpeed, 1e-12, "half-speed host");
  expect_relative(r[4], flops / (0.3 * kSpeed), 1e-12, "0.3-speed host");
  // SimGrid reports the factor as the host's available speed (get_speed() stays the peak).
  EXPECT_DOUBLE_EQ(r[1], 1.0);
  EXPECT_DOUBLE_EQ(r[3], 0.5);
  EXPECT_DOUBLE_EQ(r[5], 0.3);
}

// One transfer worker0 → worker1, `bytes` bytes from time 0; returns when it ended.
double transfer_end(const HeterogeneityConfig& h, double bytes, int workers = 3) {
  return simulate(workers, h, [bytes](const Platform& p, std::vector<double>& out) {
    sg4::Actor::create("sender", p.workers[0], [&p, &out, bytes] {
      sg4::Comm::sendto(p.workers[0], p.workers[1], static_cast<uint64_t>(bytes));
      out.push_back(sg4::Engine::get_clock());
    });
  })[0];
}

TEST(LinkProfiles, HalvingALinkDuringAWindowSlowsATransfer) {
  // Worker 1's link at 50% on [0.5 s, 1.5 s): bytes flow at B after the route latency, B/2 inside the window,
  // B again after it.
  HeterogeneityConfig h;
  h.background.link_profiles = {{{1}, {{0.0, 1.0}, {0.5, 0.5}, {1.5, 1.0}}, 0.0}};
  const double bytes = 2e9;
  const double expected =
      finish_time(bytes, kRouteLatency, {{0.0, kBandwidth}, {0.5, 0.5 * kBandwidth}, {1.5, kBandwidth}});
  EXPECT_NEAR(expected, 2.5 + kRouteLatency, 1e-12);  // 0.5 GB before, 0.5 GB inside, 1 GB after the window
  expect_relative(transfer_end(h, bytes), expected, 1e-6, "window");
  // Without the profile: latency + S/B.
  expect_relative(transfer_end({}, bytes), kRouteLatency + bytes / kBandwidth, 1e-9, "nominal");
  // The same profile on an uninvolved link changes nothing.
  HeterogeneityConfig other = h;
  other.background.link_profiles[0].workers = {2};
  expect_relative(transfer_end(other, bytes), kRouteLatency + bytes / kBandwidth, 1e-9, "other link");
}

TEST(LinkProfiles, ProfileOnTheSendersSideAndOnAllLinks) {
  // The sender's own link limits too (both directions of a link follow its profile); 'all' covers every link.
  const double bytes = 1e9;
  const double expected = finish_time(bytes, kRouteLatency, {{0.0, 0.25 * kBandwidth}});
  for (const std::vector<int>& targets : {std::vector<int>{0}, std::vector<int>{}}) {
    HeterogeneityConfig h;
    h.background.link_profiles = {{targets, {{0.0, 0.25}}, 0.0}};
    expect_relative(transfer_end(h, bytes), expected, 1e-6, targets.empty() ? "all" : "sender");
  }
}

TEST(LinkProfiles, PeriodicProfileRepeats) {
  // Full speed on [k, k + 0.5), 20% on [k + 0.5, k + 1): 0.6 GB per period. 2.5 GB take four periods and a bit.
  HeterogeneityConfig h;
  h.background.link_profiles = {{{1}, {{0.0, 1.0}, {0.5, 0.2}}, 1.0}};
  std::vector<std::pair<double, double>> rate;
  for (int k = 0; k < 10; ++k) {
    rate.push_back({k, kBandwidth});
    rate.push_back({k + 0.5, 0.2 * kBandwidth});
  }
  const double bytes = 2.5e9;
  const double expected = finish_time(bytes, kRouteLatency, rate);
  EXPECT_GT(expected, 4.0);
  expect_relative(transfer_end(h, bytes), expected, 1e-6, "periodic");
  // A periodic profile whose first point is not at 0: nominal until then, and the last level holds until the
  // next period's first point.
  HeterogeneityConfig late;
  late.background.link_profiles = {{{1}, {{0.25, 0.5}, {0.75, 1.0}}, 1.0}};
  rate.clear();
  rate.push_back({0.0, kBandwidth});
  for (int k = 0; k < 10; ++k) {
    rate.push_back({k + 0.25, 0.5 * kBandwidth});
    rate.push_back({k + 0.75, kBandwidth});
  }
  expect_relative(transfer_end(late, bytes), finish_time(bytes, kRouteLatency, rate), 1e-6, "late start");
}

TEST(BackgroundFlows, CompetingFlowTakesItsFairShare) {
  // worker2 → worker1 from 0.5 s to 1.5 s shares worker 1's down link with the transfer: once its own route
  // latency has passed, each gets B/2 until it is cut at 1.5 s.
  HeterogeneityConfig h;
  h.background.flows = {{2, 1, 0.5, 1.5, 0.0}};
  const double bytes = 2e9;
  const double shared_from = 0.5 + kRouteLatency;
  const double expected =
      finish_time(bytes, kRouteLatency, {{0.0, kBandwidth}, {shared_from, 0.5 * kBandwidth}, {1.5, kBandwidth}});
  expect_relative(transfer_end(h, bytes), expected, 1e-6, "fair share");
  // With a rate cap of B/4 the transfer keeps 3B/4 (max-min).
  h.background.flows[0].rate = 0.25 * kBandwidth;
  const double capped =
      finish_time(bytes, kRouteLatency, {{0.0, kBandwidth}, {shared_from, 0.75 * kBandwidth}, {1.5, kBandwidth}});
  expect_relative(transfer_end(h, bytes), capped, 1e-6, "capped");
  // A flow that shares no link with the transfer does not slow it.
  h.background.flows = {{2, 3, 0.0, kNever, 0.0}};
  expect_relative(transfer_end(h, bytes, 4), kRouteLatency + bytes / kBandwidth, 1e-9, "disjoint");
}

TEST(Heterogeneity, PendingEventsDoNotExtendTheRun) {
  // Events scheduled after the last actor ends (a profile point at 100 s, a periodic profile, a flow starting
  // at 50 s) must not move the clock past the end of the work.
  HeterogeneityConfig h;
  h.background.link_profiles = {{{1}, {{100.0, 0.5}}, 0.0}, {{2}, {{0.0, 1.0}, {0.5, 0.5}}, 1.0}};
  h.background.flows = {{0, 2, 50.0, kNever, 0.0}, {0, 3, 0.0, kNever, 0.0}};  // the second one runs forever
  const auto r = simulate(4, h, [](const Platform& p, std::vector<double>&) {
    sg4::Actor::create("work", p.workers[0], [] { sg4::this_actor::execute(kSpeed * 3.25); });
  });
  EXPECT_DOUBLE_EQ(r.back(), 3.25);
}

}  // namespace
}  // namespace dtsim::sim
