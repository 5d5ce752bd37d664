// NCCL's protocols in the simulation: the call and hop latencies and the payload's share of the bandwidth,
// held against closed forms written out here from NCCL's tuning constants, at every fidelity; and auto's
// choice of protocol against the sizes where those closed forms cross.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "sim/collectives/protocol.hpp"
#include "tests/sim/collectives_support.hpp"

namespace dtsim::sim {
namespace {

using testing::Case;
using testing::Outcome;
using testing::simulate_on_star;

constexpr double us = 1e-6;

// An NVSwitch-like fabric whose wire latency (2 × 0.05 µs per route) is below every protocol's NVLink hop.
FabricSpec nvlink_fabric() { return {"NVLink-like", 300e9, 0.05e-6, 0.0, 0.78}; }

CollectiveOptions with_protocol(Protocol p, HopClass hops) {
  CollectiveOptions o;
  o.protocol = p;
  o.inter_node_hops = hops;
  o.intra_node_hops = hops;
  return o;
}

TEST(Protocols, AnEightByteAllreduceBetweenTwoNodesCostsNcclsLatencies) {
  // Two single-GPU nodes over an HDR-like network, LL: NCCL's model is 6.6 µs per call plus, per step, the
  // tree's network hop latency of 5.0 µs (one GPU per node); the route's own latency (1.33 µs) is below it.
  // Each of the 2 steps moves a 4-byte chunk, 8 bytes on the wire with LL's flags.
  Case c;
  c.ranks = 2;
  c.bytes = 8;
  c.options = with_protocol(Protocol::LL, HopClass::Network);
  const Outcome o = simulate_on_star(c);
  const double expected = 6.6 * us + 2 * (5.0 * us + 8.0 / o.bandwidth);
  EXPECT_NEAR(o.seconds, expected, 1e-12);
  EXPECT_NEAR(o.predicted, expected, 1e-12);
}

TEST(Protocols, AnEightByteAllreduceOnNvlinkCostsTheNvlinkHops) {
  // Ring LL over 8 NVLink-connected GPUs: 6.6 µs + 14 steps of (0.6 µs + 2 wire bytes / B).
  Case c;
  c.ranks = 8;
  c.bytes = 8;
  c.options = with_protocol(Protocol::LL, HopClass::NVLink);
  const FabricSpec f = nvlink_fabric();
  const Outcome o = simulate_on_star(c, f);
  const double expected = 6.6 * us + 14 * (0.6 * us + 2.0 / (f.bandwidth * f.efficiency));
  EXPECT_NEAR(o.seconds, expected, 1e-12);
}

TEST(Protocols, NoneLeavesTheFabricsAlphaBeta) {
  Case c;
  c.ranks = 4;
  c.bytes = 1 << 20;
  const Outcome o = simulate_on_star(c);
  const double alpha = 2 * 0.6e-6 + 130e-9;
  EXPECT_NEAR(o.seconds, 6 * (alpha + (1 << 20) / 4.0 / o.bandwidth), 1e-12);
}

TEST(Protocols, LlPutsTwiceThePayloadOnTheWire) {
  // 64 MiB, ring over 4 ranks: every step's chunk of S/4 crosses the link as S/2 bytes with LL and as
  // S/(4 · 0.92) with LL128. Each node holds one GPU, so the network hops cost NCCL's tree latencies
  // (5.0, 8.5 and 14 µs).
  const uint64_t s = 64ull << 20;
  for (const auto& [protocol, fraction, call, hop] :
       std::vector<std::tuple<Protocol, double, double, double>>{{Protocol::LL, 0.5, 6.6, 5.0},
                                                                 {Protocol::LL128, 0.92, 14.0, 8.5},
                                                                 {Protocol::Simple, 1.0, 8.4, 14.0}}) {
    Case c;
    c.ranks = 4;
    c.bytes = s;
    c.options = with_protocol(protocol, HopClass::Network);
    const Outcome o = simulate_on_star(c);
    const double wire = std::ceil((s / 4.0) / fraction);
    const double expected = call * us + 6 * (hop * us + wire / o.bandwidth);
    EXPECT_NEAR(o.seconds, expected, 1e-9 * expected) << to_string(protocol);
    EXPECT_EQ(o.bytes_per_call, 6.0 * s) << "bytes_sent counts the payload, not the wire";
  }
}

TEST(Protocols, FidelitiesAgreeUnderEveryProtocol) {
  for (const Protocol protocol : {Protocol::LL, Protocol::LL128, Protocol::Simple})
    for (const auto& [kind, algorithm] : testing::flat_collectives())
      for (const uint64_t bytes : {uint64_t{8}, uint64_t{64} << 10, uint64_t{16} << 20}) {
        Case c;
        c.kind = kind;
        c.algorithm = algorithm;
        c.ranks = 6;
        c.bytes = bytes;
        c.options = with_protocol(protocol, HopClass::Network);
        c.fidelity = Fidelity::Stepwise;
        const Outcome stepwise = simulate_on_star(c);
        c.fidelity = Fidelity::Aggregated;
        const Outcome aggregated = simulate_on_star(c);
        c.fidelity = Fidelity::Analytic;
        const Outcome analytic = simulate_on_star(c);
        const std::string what = testing::case_name(kind, algorithm, 6) + " " + to_string(protocol) + " " +
                                 std::to_string(bytes) + " B";
        EXPECT_NEAR(analytic.seconds, stepwise.seconds, 1e-3 * stepwise.seconds) << what;
        EXPECT_NEAR(aggregated.seconds, stepwise.seconds, 1e-3 * stepwise.seconds) << what;
        EXPECT_NEAR(stepwise.predicted, stepwise.seconds, 1e-3 * stepwise.seconds) << what;
      }
}

// The ring allreduce's closed form under one protocol on the NVLink-like star of N ranks.
double ring_time(Protocol p, int n, double bytes) {
  const FabricSpec f = nvlink_fabric();
  const ProtocolCosts k = protocol_costs(p, Algorithm::Ring, CollectiveKind::Allreduce, HopContext{});
  const double alpha = std::max(2 * f.link_latency, k.hop(HopClass::NVLink));
  return k.call_latency + 2 * (n - 1) * (alpha + bytes / n / (f.bandwidth * f.efficiency * k.bandwidth_fraction));
}

TEST(Protocols, FastestTunerPicksTheProtocolWithTheLeastPredictedTime) {
  // NCCL's constants give, on 8 NVLink GPUs, LL up to a few MB, then LL128, then Simple; the crossings are
  // where the closed forms meet, and auto must switch exactly there.
  const int n = 8;
  const std::vector<Protocol> all = {Protocol::LL, Protocol::LL128, Protocol::Simple};
  std::vector<uint64_t> sizes;
  for (uint64_t s = 8; s <= (1ull << 30); s *= 2) sizes.push_back(s);
  // The crossings, solved from the closed forms: T_a(S) = T_b(S) is linear in S.
  const auto crossing = [&](Protocol a, Protocol b) {
    const double a0 = ring_time(a, n, 0), a1 = ring_time(a, n, 1) - a0;
    const double b0 = ring_time(b, n, 0), b1 = ring_time(b, n, 1) - b0;
    return (b0 - a0) / (a1 - b1);
  };
  const double ll_to_ll128 = crossing(Protocol::LL, Protocol::LL128);
  const double ll128_to_simple = crossing(Protocol::LL128, Protocol::Simple);
  ASSERT_LT(ll_to_ll128, ll128_to_simple);
  EXPECT_GT(ll_to_ll128, 1e6);  // LL's low latency wins up to megabytes on NVLink...
  EXPECT_LT(ll128_to_simple, 1e8);  // ...and Simple's full bandwidth from about 24 MB

  const std::string out = dtsim::testing::run_in_child([&] {
    auto engine = testing::create_exact_engine();
    const FabricSpec f = nvlink_fabric();
    const Platform p = build_star(n, 1e12, f);
    install_fabric_calibration(*engine, f);
    CollectiveOptions options = with_protocol(Protocol::Auto, HopClass::NVLink);
    options.tuner = CollectiveTuner::Fastest;  // the least predicted time (NCCL's tuner: nccl_tuning_test.cpp)
    auto ar = make_collective(CollectiveKind::Allreduce, Algorithm::Ring, Fidelity::Analytic, p, "auto", options);
    std::string variants;
    for (const uint64_t s : sizes) variants += ar->variant(s) + "\n";
    return variants;
  });
  std::vector<std::string> variants;
  for (size_t at = 0, next; (next = out.find('\n', at)) != std::string::npos; at = next + 1)
    variants.push_back(out.substr(at, next - at));
  ASSERT_EQ(variants.size(), sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double s = static_cast<double>(sizes[i]);
    const std::string expected = s < ll_to_ll128 ? "ring/ll" : s < ll128_to_simple ? "ring/ll128" : "ring/simple";
    EXPECT_EQ(variants[i], expected) << sizes[i] << " B (crossings at " << ll_to_ll128 << " and " << ll128_to_simple
                                     << " B)";
  }
}

TEST(Protocols, LL128IsNoCandidateAcrossPcie) {
  EXPECT_EQ(auto_protocol_candidates(CollectiveKind::Allreduce, true), (std::vector<Protocol>{Protocol::LL, Protocol::Simple}));
  EXPECT_EQ(auto_protocol_candidates(CollectiveKind::Allreduce, false),
            (std::vector<Protocol>{Protocol::LL, Protocol::LL128, Protocol::Simple}));
  // All-to-all is point-to-point in NCCL: LL or Simple, wherever it runs.
  EXPECT_EQ(auto_protocol_candidates(CollectiveKind::AllToAll, false), (std::vector<Protocol>{Protocol::LL, Protocol::Simple}));
}

TEST(Protocols, MultiNodeRingHopsWaitForTheNetworkProxy) {
  // NCCL's getNetOverhead: on a multi-node ring no hop is shorter than 1 µs (3 µs with Simple).
  HopContext multi;
  multi.crosses_network = true;
  const ProtocolCosts ll = protocol_costs(Protocol::LL, Algorithm::Ring, CollectiveKind::Allreduce, multi);
  EXPECT_DOUBLE_EQ(ll.hop(HopClass::NVLink), 1.0 * us);
  const ProtocolCosts simple = protocol_costs(Protocol::Simple, Algorithm::Ring, CollectiveKind::Allreduce, multi);
  EXPECT_DOUBLE_EQ(simple.hop(HopClass::NVLink), 3.4 * us);
  EXPECT_DOUBLE_EQ(simple.hop(HopClass::PCIe), 5.7 * us);
  const ProtocolCosts single = protocol_costs(Protocol::LL, Algorithm::Ring, CollectiveKind::Allreduce, HopContext{});
  EXPECT_DOUBLE_EQ(single.hop(HopClass::NVLink), 0.6 * us);
}

}  // namespace
}  // namespace dtsim::sim
