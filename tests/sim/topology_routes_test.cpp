// Every topology builds at small and large sizes, and its routes have the hop counts and latencies the
// wiring implies: a route of h links on the fabric crosses h − 1 switches (h·link + (h−1)·switch), a torus
// hop pays link + switch, a GPU's port into its node is on every route it takes.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/sim/topology_support.hpp"

namespace dtsim::sim {
namespace {

using namespace testing;

std::string nodes_of(int gpus_per_node) {
  return "gpus_per_node = " + std::to_string(gpus_per_node) + "\nintra_node_fabric = " + profile("test-nvlink") + "\n";
}

TEST(StarRoutes, OneSwitchBetweenEveryPairAndNvlinkInsideNodes) {
  const auto plain = routes_between(config_of("[cluster]\nworkers = 8\n"), {{0, 1}, {7, 3}});
  EXPECT_EQ(hops(plain[0]), 2u);
  EXPECT_DOUBLE_EQ(plain[1]["latency"].get<double>(), ib_route_latency(2));

  const auto nodes = routes_between(config_of("[cluster]\nworkers = 16\n" + nodes_of(8)), {{0, 1}, {0, 8}, {15, 2}});
  EXPECT_EQ(nodes[0]["links"], nlohmann::json({"worker0.port_UP", "worker1.port_DOWN"}));
  EXPECT_NEAR(nodes[0]["latency"].get<double>(), nvlink_ports_latency(), 1e-15);
  // Between nodes a GPU reaches its NIC over PCIe, not its NVLink port: the route leaves through a link of
  // its own to the NIC (no latency of its own; the NIC's bandwidth).
  EXPECT_EQ(nodes[1]["links"],
            nlohmann::json({"worker0.to-nic_UP", "nic-node0.nic0_UP", "nic-node1.nic0_DOWN", "worker8.to-nic_DOWN"}));
  EXPECT_NEAR(nodes[2]["latency"].get<double>(), ib_route_latency(2), 1e-15);
}

struct FatTreeCase {
  const char* name;
  int workers;
  std::string extra;            // more [cluster] keys
  std::vector<std::pair<int, int>> pairs;
  std::vector<size_t> hops;     // per pair
  std::vector<double> latency;  // per pair
};

class FatTreeRoutes : public ::testing::TestWithParam<FatTreeCase> {};

TEST_P(FatTreeRoutes, HopsAndLatencies) {
  const FatTreeCase& c = GetParam();
  const auto routes = routes_between(
      config_of("[cluster]\ntopology = fat-tree\nworkers = " + std::to_string(c.workers) + "\n" + c.extra), c.pairs);
  for (size_t i = 0; i < c.pairs.size(); ++i) {
    EXPECT_EQ(hops(routes[i]), c.hops[i]) << c.pairs[i].first << " -> " << c.pairs[i].second << ": " << routes[i];
    EXPECT_NEAR(routes[i]["latency"].get<double>(), c.latency[i], 1e-15) << c.pairs[i].first << " -> " << c.pairs[i].second;
  }
}

const double kNv = 2 * NvLink::link + NvLink::sw;

INSTANTIATE_TEST_SUITE_P(
    Sizes, FatTreeRoutes,
    ::testing::Values(
        // 8 nodes: leaves of 4 ports (the power of two above √8), so 0-3 share a leaf.
        FatTreeCase{"n8", 8, "", {{0, 3}, {0, 4}}, {2, 4}, {ib_route_latency(2), ib_route_latency(4)}},
        FatTreeCase{"n1024", 1024, "", {{0, 31}, {0, 32}, {1023, 0}}, {2, 4, 4},
                    {ib_route_latency(2), ib_route_latency(4), ib_route_latency(4)}},
        FatTreeCase{"n4096", 4096, "", {{0, 63}, {0, 64}, {4095, 17}}, {2, 4, 4},
                    {ib_route_latency(2), ib_route_latency(4), ib_route_latency(4)}},
        FatTreeCase{"oversubscribed", 64, "leaf_ports = 8\noversubscription = 2\n", {{0, 7}, {0, 8}}, {2, 4},
                    {ib_route_latency(2), ib_route_latency(4)}},
        // 3 levels, 64 nodes: 4 ports per leaf, 4 leaves per pod, 4 pods.
        FatTreeCase{"three_levels_64", 64, "fat_tree_levels = 3\n", {{0, 3}, {0, 4}, {0, 16}, {63, 0}}, {2, 4, 6, 6},
                    {ib_route_latency(2), ib_route_latency(4), ib_route_latency(6), ib_route_latency(6)}},
        // 3 levels, 1024 nodes: 16 ports, 8 leaves per pod, 8 pods.
        FatTreeCase{"three_levels_1024", 1024, "fat_tree_levels = 3\n", {{0, 15}, {0, 16}, {0, 128}}, {2, 4, 6},
                    {ib_route_latency(2), ib_route_latency(4), ib_route_latency(6)}},
        // 128 nodes of 8 GPUs: 16 nodes per leaf; inside a node two NVLink ports, between nodes each GPU's
        // link to its NIC at both ends (no latency of their own).
        FatTreeCase{"gpus1024_nodes8", 1024, nodes_of(8), {{0, 7}, {0, 8}, {0, 128}}, {2, 4, 6},
                    {kNv, ib_route_latency(2), ib_route_latency(4)}}),
    [](const auto& info) { return std::string(info.param.name); });

// Rail-optimized: NIC j of every node on rail j's leaf. 8 nodes × 8 GPUs × 8 NICs, 8 ports per leaf: rail
// j is leaf j, and NIC j of node a is fat-tree position 8j + a.
TEST(RailOptimized, NicJOfEveryNodeHangsOffRailJ) {
  const std::string base = "[cluster]\ntopology = fat-tree\nworkers = 64\nnics_per_node = 8\nleaf_ports = 8\n" + nodes_of(8);
  const auto rails = routes_between(config_of(base + "rail_optimized = true\n"), {{0, 8}, {13, 45}, {0, 9}, {0, 1}});
  // GPU 0 of node 0 to GPU 0 of node 1: its link to the NIC, rail 0's leaf, the peer's link from its NIC.
  EXPECT_EQ(hops(rails[0]), 4u);
  EXPECT_NEAR(rails[0]["latency"].get<double>(), ib_route_latency(2), 1e-15);
  // GPU 5 of node 1 (NIC 5: position 8·5 + 1 = 41) to GPU 5 of node 5 (position 45), both on leaf 5.
  const auto& links = rails[1]["links"];
  ASSERT_EQ(links.size(), 4u) << rails[1];
  EXPECT_EQ(links[0], "worker13.to-nic_UP");
  EXPECT_EQ(links[1].get<std::string>().rfind("link_from_41_", 0), 0u) << links[1];
  EXPECT_EQ(links[2].get<std::string>().rfind("link_from_45_", 0), 0u) << links[2];
  EXPECT_EQ(links[3], "worker45.to-nic_DOWN");
  // Another rail goes over a spine.
  EXPECT_EQ(hops(rails[2]), 6u);
  // Inside a node, whichever NICs: port, the node's switch, port.
  EXPECT_EQ(rails[3]["links"], nlohmann::json({"worker0.port_UP", "node0.switch", "worker1.port_DOWN"}));
  EXPECT_NEAR(rails[3]["latency"].get<double>(), kNv, 1e-15);

  // Without rails a node's 8 NICs fill one leaf: node 0 to node 1 crosses a spine whatever the NIC.
  const auto flat = routes_between(config_of(base), {{0, 8}, {0, 1}});
  EXPECT_EQ(hops(flat[0]), 6u);
  EXPECT_EQ(flat[0]["links"][1].get<std::string>().rfind("link_from_0_", 0), 0u);
  EXPECT_EQ(flat[0]["links"][4].get<std::string>().rfind("link_from_8_", 0), 0u);
  EXPECT_EQ(hops(flat[1]), 3u);
}

// Shortest way round each dimension: Σ min(|Δ|, size − |Δ|) hops of link + switch each.
int torus_hops(int a, int b, const std::vector<int>& dims) {
  int h = 0;
  for (const int d : dims) {
    const int delta = std::abs(a % d - b % d);
    h += std::min(delta, d - delta);
    a /= d;
    b /= d;
  }
  return h;
}

class TorusRoutes : public ::testing::TestWithParam<std::vector<int>> {};

TEST_P(TorusRoutes, WrapAroundDistances) {
  const std::vector<int> dims = GetParam();
  int n = 1;
  std::string text;
  for (const int d : dims) {
    n *= d;
    text += (text.empty() ? "" : ",") + std::to_string(d);
  }
  std::vector<std::pair<int, int>> pairs = {{0, 1}, {0, dims[0] - 1}, {0, n - 1}, {n / 2, 3}, {5 % n, n - 2}};
  for (int i = 0; i < 20; ++i) pairs.emplace_back((i * 7919) % n, (i * 104729 + 13) % n);
  const auto routes =
      routes_between(config_of("[cluster]\ntopology = torus\nworkers = " + std::to_string(n) + "\ntorus_dims = " + text), pairs);
  for (size_t i = 0; i < pairs.size(); ++i) {
    const int h = torus_hops(pairs[i].first, pairs[i].second, dims);
    EXPECT_EQ(static_cast<int>(hops(routes[i])), h) << pairs[i].first << " -> " << pairs[i].second;
    EXPECT_NEAR(routes[i]["latency"].get<double>(), h * (Ib::link + Ib::sw), 1e-15);
  }
  // The wrap-around link: the first and last node of a ring are neighbours.
  EXPECT_EQ(hops(routes[1]), 1u);
}

INSTANTIATE_TEST_SUITE_P(Shapes, TorusRoutes,
                         ::testing::Values(std::vector<int>{4, 4}, std::vector<int>{4, 4, 4}, std::vector<int>{5, 3},
                                           std::vector<int>{8, 8, 16}, std::vector<int>{16, 16, 16}),
                         [](const auto& info) {
                           std::string s = "d";
                           for (const int d : info.param) s += "_" + std::to_string(d);
                           return s;
                         });

// SimGrid 3.32's minimal dragonfly routing: to another group, first to the router of the source chassis
// wired to that group (router number = target group), to chassis 0, over the global link (arriving at the
// router numbered like the source group), then to the target router and chassis. (dtsim builds one
// chassis per group: with more, SimGrid skips the chassis hop on some routes and this count would differ.)
int dragonfly_hops(int src, int dst, int chassis, int routers, int nodes) {
  const auto coords = [&](int p) {
    return std::vector<int>{p / (chassis * routers * nodes), (p / (routers * nodes)) % chassis, (p / nodes) % routers};
  };
  const auto s = coords(src), t = coords(dst);
  if (s == t) return 2;
  int h = 2, cur_chassis = s[1], cur_router = s[2];
  if (t[0] != s[0]) {
    if (cur_router != t[0]) ++h;
    if (cur_chassis != 0) ++h;
    ++h;  // the global link
    cur_chassis = 0;
    cur_router = s[0];
  }
  if (t[2] != cur_router) ++h;
  if (t[1] != cur_chassis) ++h;
  return h;
}

class DragonflyRoutes : public ::testing::TestWithParam<std::vector<int>> {};

TEST_P(DragonflyRoutes, LevelsAndLatencies) {
  const auto p = GetParam();  // groups, chassis, routers, nodes per router
  const int n = p[0] * p[1] * p[2] * p[3];
  const int per_group = p[1] * p[2] * p[3];
  std::vector<std::pair<int, int>> pairs = {{0, 1},                   // same router
                                            {0, p[3]},                  // next router of the group
                                            {0, per_group},             // next group, via router 1
                                            {per_group + (p[2] - 1) * p[3], 0},  // group 1, last router to group 0
                                            {per_group - 1, n - 1},     // far corners
                                            {n - 1, 0}};
  for (int i = 0; i < 20; ++i) pairs.emplace_back((i * 7919) % n, (i * 104729 + 13) % n);
  const auto routes = routes_between(
      config_of("[cluster]\ntopology = dragonfly\nworkers = " + std::to_string(n) + "\ndragonfly_groups = " +
                std::to_string(p[0]) + "\ndragonfly_chassis = " + std::to_string(p[1]) + "\ndragonfly_routers = " +
                std::to_string(p[2])),
      pairs);
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i].first == pairs[i].second) continue;
    const int h = dragonfly_hops(pairs[i].first, pairs[i].second, p[1], p[2], p[3]);
    EXPECT_EQ(static_cast<int>(hops(routes[i])), h) << pairs[i].first << " -> " << pairs[i].second << ": " << routes[i];
    EXPECT_NEAR(routes[i]["latency"].get<double>(), ib_route_latency(h), 1e-15);
  }
  EXPECT_EQ(hops(routes[0]), 2u);  // local, local
  EXPECT_EQ(hops(routes[1]), 3u);  // local, router to router, local
  EXPECT_EQ(hops(routes[2]), 4u);  // local, router 0 to router 1 (wired to group 1), global, local
  EXPECT_EQ(hops(routes[3]), 5u);  // local, to router 0, global (lands on router 1), to router 0, local
}

INSTANTIATE_TEST_SUITE_P(Shapes, DragonflyRoutes,
                         ::testing::Values(std::vector<int>{2, 1, 2, 2}, std::vector<int>{4, 1, 4, 4},
                                           std::vector<int>{8, 1, 8, 16}, std::vector<int>{16, 1, 16, 16}),
                         [](const auto& info) {
                           std::string s = "g";
                           for (const int d : info.param) s += "_" + std::to_string(d);
                           return s;
                         });

TEST(TwoSites, RoutesCrossTheWanBetweenBorders) {
  const std::string wan = "[cluster]\ntopology = two-sites\nwan_profile = " + profile("test-wan") + "\n";
  // The WAN profile's link is half a route through its fabric: one way is two of them, plus each border router.
  const double wan_latency = 2 * Wan::link + 2 * Wan::sw;
  const auto stars = routes_between(config_of(wan + "workers = 8\n"), {{0, 3}, {0, 4}, {7, 2}});
  EXPECT_NEAR(stars[0]["latency"].get<double>(), ib_route_latency(2), 1e-15);
  EXPECT_EQ(stars[1]["links"], nlohmann::json({"nic-worker0_UP", "nic-site0.border_DOWN", "wan_UP",
                                               "nic-site1.border_UP", "nic-worker4_DOWN"}));
  EXPECT_NEAR(stars[1]["latency"].get<double>(), 2 * ib_route_latency(2) + wan_latency, 1e-12);
  EXPECT_EQ(stars[2]["links"][2], "wan_DOWN");

  // Fat-tree sites of 8 nodes, 4 ports per leaf: the border takes a third leaf of each site.
  const auto trees = routes_between(config_of(wan + "workers = 16\nsite_topology = fat-tree\nleaf_ports = 4\n"),
                                    {{0, 3}, {0, 8}, {12, 5}});
  EXPECT_EQ(hops(trees[0]), 2u);
  EXPECT_EQ(hops(trees[1]), 9u) << trees[1];
  EXPECT_NEAR(trees[1]["latency"].get<double>(), 2 * ib_route_latency(4) + wan_latency, 1e-12);
  EXPECT_EQ(trees[2]["links"][4], "wan_DOWN");

  // Uneven sites, multi-GPU nodes, a server in the first site.
  const auto split = in_platform(
      config_of(wan + "workers = 12\nsite_nodes = 1,2\n" + nodes_of(4)),
      [](sg4::Engine&, const Platform& p) {
        return nlohmann::json{{"server", route_json(p.workers[0], p.servers[0])}, {"cross", route_json(p.workers[0], p.workers[4])}};
      },
      1);
  EXPECT_NEAR(split["server"]["latency"].get<double>(), ib_route_latency(2), 1e-15);
  EXPECT_NEAR(split["cross"]["latency"].get<double>(), 2 * ib_route_latency(2) + wan_latency, 1e-12);
}

TEST(PlatformFields, RanksNodesLinksAndServers) {
  const RunConfig c = config_of("[cluster]\ntopology = fat-tree\nworkers = 12\ngroups = big:1:a100-40gb:8; small:2:" +
                                profile("test-v100") + ":2\nintra_node_fabric = " + profile("test-nvlink") + "\n");
  const auto j = in_platform(
      c,
      [](sg4::Engine& e, const Platform& p) {
        nlohmann::json out;
        for (auto* h : p.workers) out["names"].push_back(h->get_name());
        out["node_of_worker"] = p.node_of_worker;
        out["workers_of_node"] = p.workers_of_node;
        for (auto* l : p.worker_links) out["links"].push_back(l ? l->get_name() : "");
        out["servers"] = p.servers.size();
        out["server_route"] = route_json(p.workers[11], p.servers[1]);
        out["description"] = p.description;
        out["hosts"] = e.get_host_count();
        return out;
      },
      2);
  EXPECT_EQ(j["names"][0], "worker0");
  EXPECT_EQ(j["names"][11], "worker11");
  EXPECT_EQ(j["node_of_worker"], nlohmann::json({0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(j["workers_of_node"][2], nlohmann::json({10, 11}));
  EXPECT_EQ(j["links"][9], "worker9.to-nic");  // a worker's own link is its way to the network
  EXPECT_EQ(j["servers"], 2);
  EXPECT_EQ(j["hosts"], 14);
  // Two servers and three nodes: 5 ports, leaves of 4 (√5 → 4): server 1 (port 4) is on the second leaf.
  EXPECT_NEAR(j["server_route"]["latency"].get<double>(), ib_route_latency(4), 1e-15);
  EXPECT_TRUE(contains(j["description"], "big: 1 × 8 GPUs A100-SXM4-40GB + small: 2 × 2 GPUs test V100")) << j["description"];

  // Bare hosts: the first link is the port the zone made.
  const auto bare = in_platform(config_of("[cluster]\ntopology = fat-tree\nworkers = 8\n"),
                                [](sg4::Engine&, const Platform& p) {
                                  std::vector<std::string> names;
                                  for (auto* l : p.worker_links) names.push_back(l->get_name());
                                  return nlohmann::json{{"links", names}, {"route", route_json(p.workers[2], p.workers[5])}};
                                });
  EXPECT_EQ(bare["links"][2], bare["route"]["links"][0]);
}

}  // namespace
}  // namespace dtsim::sim
