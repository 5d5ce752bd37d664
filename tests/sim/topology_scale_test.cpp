// Large platforms build fast and small: 4096 GPUs on each topology, one ring step (every rank sends a chunk
// to the next) simulated against its closed form. Prints the wall time to build and to run, the child's
// peak resident memory and how much of it the simulation added (the rest is the process: CUDA and SimGrid
// libraries, about 150-250 MB).
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "tests/sim/topology_support.hpp"

namespace dtsim::sim {
namespace {

using namespace testing;

struct ScaleCase {
  const char* name;
  std::string cluster;  // [cluster] keys
  double alpha;         // largest route latency between ring neighbours
  double beta;          // per-byte time of the slowest neighbour route
};

// A "VmRSS:"-style line of /proc/self/status, in MB.
double status_mb(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field, 0) == 0) return std::stod(line.substr(field.size())) / 1024.0;
  return 0.0;
}

class LargePlatforms : public ::testing::TestWithParam<ScaleCase> {};

TEST_P(LargePlatforms, BuildAndOneRingStep) {
  const ScaleCase& c = GetParam();
  const RunConfig config = config_of("[cluster]\nworkers = 4096\n" + c.cluster);
  const double chunk = 1e6;
  const std::string out = dtsim::testing::run_in_child([&] {
    using clock = std::chrono::steady_clock;
    const double rss_before = status_mb("VmRSS:");
    const auto t0 = clock::now();
    auto engine = create_engine({config.network_model, config.crosstraffic});
    const Platform p = build_platform(*engine, platform_spec(config));
    const auto t1 = clock::now();
    const int n = p.num_workers();
    std::vector<sg4::Mailbox*> inbox;
    for (int r = 0; r < n; ++r) inbox.push_back(sg4::Mailbox::by_name("ring" + std::to_string(r)));
    static int token = 0;
    for (int r = 0; r < n; ++r)
      sg4::Actor::create("rank" + std::to_string(r), p.workers[r], [&inbox, r, n, chunk] {
        sg4::CommPtr send = inbox[(r + 1) % n]->put_async(&token, static_cast<uint64_t>(chunk));
        inbox[r]->get<int>();
        send->wait();
      });
    engine->run();
    const auto t2 = clock::now();
    const double peak = status_mb("VmHWM:");
    nlohmann::json r = {{"build_s", std::chrono::duration<double>(t1 - t0).count()},
                        {"run_s", std::chrono::duration<double>(t2 - t1).count()},
                        {"max_rss_mb", peak},
                        {"growth_mb", peak - rss_before},
                        {"simulated", sg4::Engine::get_clock()},
                        {"description", p.description}};
    return r.dump();
  });
  const auto r = nlohmann::json::parse(out);
  std::printf("[ scale    ] %s: build %.3f s, one ring step %.3f s, peak RSS %.1f MB (+%.1f MB for the simulation) (%s)\n",
              c.name, r["build_s"].get<double>(), r["run_s"].get<double>(), r["max_rss_mb"].get<double>(),
              r["growth_mb"].get<double>(), r["description"].get<std::string>().c_str());
  EXPECT_NEAR(r["simulated"].get<double>(), c.alpha + chunk * c.beta, 1e-9);
  EXPECT_LT(r["build_s"].get<double>(), 30.0);
}

const double kIb = 1.0 / (Ib::efficiency * Ib::bandwidth);

INSTANTIATE_TEST_SUITE_P(
    Gpus4096, LargePlatforms,
    ::testing::Values(
        ScaleCase{"star", "", ib_route_latency(2), kIb},
        // 64 leaves of 64: neighbours on different leaves cross a spine.
        ScaleCase{"fat_tree", "topology = fat-tree\n", ib_route_latency(4), kIb},
        ScaleCase{"fat_tree_3_levels", "topology = fat-tree\nfat_tree_levels = 3\n", ib_route_latency(6), kIb},
        // 512 nodes × 8 GPUs × 8 NICs on rails (bypass routes between a node's NIC slices): GPU 7 of a node
        // to GPU 0 of the next goes from rail 7 to rail 0 over a spine, leaving and entering over PCIe (no
        // NVLink port on the route), which takes longer than the NVLink hops inside a node.
        ScaleCase{"fat_tree_rails_8gpu_nodes",
                  "topology = fat-tree\ngpus_per_node = 8\nnics_per_node = 8\nrail_optimized = true\nintra_node_fabric = " +
                      profile("test-nvlink") + "\n",
                  ib_route_latency(4), kIb},
        ScaleCase{"torus_16x16x16", "topology = torus\ntorus_dims = 16,16,16\n",
                  // (15,15,z) to (0,0,z+1): one hop (with wrap-around) in each dimension.
                  3 * (Ib::link + Ib::sw), kIb},
        // Two fat-trees of 2048 nodes (and a border leaf each): ranks 2047 → 2048 and 4095 → 0 cross the WAN,
        // one each way. A short WAN, so that SimGrid's TCP window does not cap the flows.
        ScaleCase{"two_sites_fat_trees",
                  "topology = two-sites\nsite_topology = fat-tree\nwan_latency = 10us\nwan_profile = " + profile("test-wan") + "\n",
                  2 * ib_route_latency(4) + 10e-6 + 2 * Wan::sw, 1.0 / (Wan::efficiency * Wan::bandwidth)},
        ScaleCase{"dragonfly_16x16x16", "topology = dragonfly\ndragonfly_groups = 16\ndragonfly_routers = 16\n",
                  // group g's last node to group g+1's first: local, to router g+1, global, to router 0, local.
                  ib_route_latency(5), kIb}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace dtsim::sim
