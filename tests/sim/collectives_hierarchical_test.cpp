// The hierarchical allreduce on a two-level platform built here: nodes of g GPUs on a fast intra-node star
// (NVLink-like), the nodes' NICs on a slower star. Against its closed form: ring reduce-scatter inside the
// nodes, the inter-node allreduce of S/g among corresponding ranks (the g groups share each node's NIC),
// ring all-gather inside the nodes.
#include <gtest/gtest.h>

#include "sim/collectives/collective.hpp"
#include "sim/collectives/collective_error.hpp"
#include "sim/world/platform.hpp"
#include "tests/sim/collectives_support.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

constexpr double kGpuLinkBandwidth = 150e9, kGpuLinkLatency = 0.5e-6;
constexpr double kNicBandwidth = 25e9, kNicLatency = 1e-6;

// Nodes are star zones with a gateway router; the top-level star connects the gateways by their NICs. A
// route inside a node is gpu link up, gpu link down; across nodes it is gpu link, the gateway's zero-cost
// attachment, NIC up, NIC down, attachment, gpu link.
Platform build_two_level(int nodes, int gpus_per_node) {
  auto* top = sg4::create_star_zone("top");
  Platform p;
  for (int n = 0; n < nodes; ++n) {
    auto* node = sg4::create_star_zone("node" + std::to_string(n));
    node->set_parent(top);
    auto* gateway = node->create_router("gw" + std::to_string(n));
    auto* attach = node->create_split_duplex_link("attach" + std::to_string(n), 1e15);
    attach->set_latency(0);
    node->add_route(gateway, nullptr, nullptr, nullptr, {{attach, sg4::LinkInRoute::Direction::UP}}, true);
    p.workers_of_node.emplace_back();
    for (int g = 0; g < gpus_per_node; ++g) {
      const int rank = n * gpus_per_node + g;
      sg4::Host* host = node->create_host("gpu" + std::to_string(rank), 1e12);
      auto* link = node->create_split_duplex_link("nvl" + std::to_string(rank), kGpuLinkBandwidth);
      link->set_latency(kGpuLinkLatency);
      node->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link, sg4::LinkInRoute::Direction::UP}}, true);
      p.workers.push_back(host);
      p.worker_links.push_back(link);
      p.node_of_worker.push_back(n);
      p.workers_of_node.back().push_back(rank);
    }
    node->seal();
    auto* nic = top->create_split_duplex_link("nic" + std::to_string(n), kNicBandwidth);
    nic->set_latency(kNicLatency);
    top->add_route(node->get_netpoint(), nullptr, gateway, nullptr, {{nic, sg4::LinkInRoute::Direction::UP}}, true);
  }
  top->seal();
  p.description = "two-level test platform";
  return p;
}

struct Result {
  double seconds, intra_alpha, inter_alpha, bytes_sent;
};

Result simulate(int nodes, int g, uint64_t bytes, Algorithm inter, Fidelity fidelity) {
  const std::string out = dtsim::testing::run_in_child([&] {
    auto engine = testing::create_exact_engine();
    const Platform p = build_two_level(nodes, g);
    CollectiveOptions options;
    options.inter_node = inter;
    auto ar = make_collective(CollectiveKind::Allreduce, Algorithm::Hierarchical, fidelity, p, "hier", options);
    double done = 0.0;
    for (int r = 0; r < nodes * g; ++r)
      sg4::Actor::create("rank" + std::to_string(r), p.workers[r], [&, r] {
        ar->run(r, bytes);
        done = std::max(done, sg4::Engine::get_clock());
      });
    engine->run();
    const double intra = g > 1 ? route_latency(p.workers[0], p.workers[1]) : 0.0;
    const double across = nodes > 1 ? route_latency(p.workers[0], p.workers[g]) : 0.0;
    return dtsim::testing::to_bytes(
        std::vector<Result>{{done, intra, across, static_cast<double>(ar->bytes_sent())}});
  });
  return dtsim::testing::from_bytes<Result>(out).at(0);
}

using Param = std::tuple<int, int, Algorithm>;
class Hierarchical : public ::testing::TestWithParam<Param> {};

TEST_P(Hierarchical, StepwiseMatchesItsClosedForm) {
  const auto [nodes, g, inter] = GetParam();
  const uint64_t bytes = 15ull << 20;  // divisible by g, and by every inter-node chunk count below
  const Result r = simulate(nodes, g, bytes, inter, Fidelity::Stepwise);
  EXPECT_NEAR(r.intra_alpha, 2 * kGpuLinkLatency, 1e-15);
  EXPECT_NEAR(r.inter_alpha, 2 * kGpuLinkLatency + 2 * kNicLatency, 1e-15);

  CollectiveOptions options;
  options.inter_node = inter;
  const AlphaBeta intra{2 * kGpuLinkLatency, kGpuLinkBandwidth};
  // The g inter-node allreduces run at once, each rank's flows through its node's one NIC.
  const AlphaBeta across{2 * kGpuLinkLatency + 2 * kNicLatency, kNicBandwidth / g};
  const double expected = hierarchical_closed_form_seconds(g, nodes, bytes, intra, across, options);
  // Written out for the ring: 2(g−1)(α_i + S/(g B_i)) + 2(G−1)(α_e + (S/g)/(G B_e/g)).
  if (inter == Algorithm::Ring) {
    const double s = static_cast<double>(bytes);
    const double by_hand = 2.0 * (g - 1) * (intra.alpha + s / (g * intra.bandwidth)) +
                           2.0 * (nodes - 1) * (across.alpha + s / g / (nodes * across.bandwidth));
    EXPECT_NEAR(expected, by_hand, 1e-12 * by_hand);
  }
  EXPECT_NEAR(r.seconds, expected, 5e-3 * expected);

  // Bytes: (g−1)·S per node for each intra-node phase; between nodes g allreduces of S/g each.
  const double s = static_cast<double>(bytes);
  int p = 1;
  while (2 * p <= nodes) p *= 2;
  const double inter_bytes = inter == Algorithm::HalvingDoubling ? (2.0 * (p - 1) + 2.0 * (nodes - p)) * s
                                                                 : 2.0 * (nodes - 1) * s;
  EXPECT_EQ(r.bytes_sent, 2.0 * nodes * (g - 1) * s + inter_bytes);
}

TEST_P(Hierarchical, AggregatedWithinTwoPercentOfStepwise) {
  const auto [nodes, g, inter] = GetParam();
  const uint64_t bytes = 15ull << 20;
  const Result step = simulate(nodes, g, bytes, inter, Fidelity::Stepwise);
  const Result agg = simulate(nodes, g, bytes, inter, Fidelity::Aggregated);
  EXPECT_NEAR(agg.seconds, step.seconds, 0.02 * step.seconds);
  EXPECT_EQ(agg.bytes_sent, step.bytes_sent);
}

TEST_P(Hierarchical, AnalyticReadsBothLevelsFromThePlatform) {
  const auto [nodes, g, inter] = GetParam();
  const uint64_t bytes = 15ull << 20;
  const Result r = simulate(nodes, g, bytes, inter, Fidelity::Analytic);
  CollectiveOptions options;
  options.inter_node = inter;
  const double expected = hierarchical_closed_form_seconds(g, nodes, bytes, {2 * kGpuLinkLatency, kGpuLinkBandwidth},
                                                           {2 * kGpuLinkLatency + 2 * kNicLatency, kNicBandwidth / g},
                                                           options);
  EXPECT_NEAR(r.seconds, expected, 1e-12 * expected);
}

INSTANTIATE_TEST_SUITE_P(
    TwoLevel, Hierarchical,
    ::testing::Values(Param{2, 4, Algorithm::Ring}, Param{3, 2, Algorithm::Ring}, Param{4, 8, Algorithm::Ring},
                      Param{5, 3, Algorithm::Ring}, Param{4, 4, Algorithm::DoubleBinaryTree},
                      Param{3, 4, Algorithm::DoubleBinaryTree}, Param{4, 2, Algorithm::HalvingDoubling},
                      Param{5, 2, Algorithm::HalvingDoubling}),
    [](const auto& info) {
      std::string name = "G" + std::to_string(std::get<0>(info.param)) + "_g" + std::to_string(std::get<1>(info.param)) +
                         "_" + to_string(std::get<2>(info.param));
      for (char& c : name)
        if (c == '-') c = '_';
      return name;
    });

TEST(Hierarchical, RejectsNodesOfDifferentSizes) {
  const std::string out = dtsim::testing::run_in_child([] {
    auto engine = testing::create_exact_engine();
    Platform p = build_two_level(2, 2);
    p.workers_of_node = {{0, 1, 2}, {3}};
    try {
      make_collective(CollectiveKind::Allreduce, Algorithm::Hierarchical, Fidelity::Stepwise, p, "bad");
    } catch (const CollectiveError& e) {
      return std::string("rejected: ") + e.what();
    }
    return std::string("accepted");
  });
  // The caller names the key (sync_dp: collective.algorithm); the collective only says why.
  EXPECT_EQ(out,
            "rejected: hierarchical allreduce needs the same number of ranks on every node (found 3 and 1); use ring, "
            "tree or halving-doubling");
}

}  // namespace
}  // namespace dtsim::sim
