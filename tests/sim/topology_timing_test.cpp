// Simulated times on the built platforms against closed forms: contention on an oversubscribed fat-tree,
// NVLink inside nodes and NICs between them, the per-route calibration of flows that cross several fabrics,
// the WAN, mixed GPU speeds and the IB model.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "sim/world/heterogeneity.hpp"
#include "tests/sim/topology_support.hpp"

namespace dtsim::sim {
namespace {

using namespace testing;

std::vector<std::tuple<int, int, double>> all_to_all(int n, double bytes) {
  std::vector<std::tuple<int, int, double>> t;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b) t.emplace_back(a, b, bytes);
  return t;
}

// 16 nodes, 4 leaves of 4 ports, all-to-all of S bytes per pair. Every node's port carries N − 1 = 15 flows
// each way. D-mod-k routing sends the flows to destination d up uplink d mod u, so each of a leaf's u
// uplinks (and each spine's link down to a leaf) carries k(N − k)/u of the k(N − k) flows that leave (enter)
// the leaf. Non-blocking (u = 4): 12 flows per uplink, the ports are the bottleneck, every flow gets B/15.
// 2:1 (u = 2): 24 flows per uplink, B/24 each for every inter-leaf flow, for their whole life (the
// intra-leaf flows take what the ports have left). Time ratio 24/15 = 2(N − k)/(N − 1) = 1.6.
TEST(FatTreeContention, TwoToOneOversubscriptionSlowsAllToAllByTheUplinkShare) {
  const int n = 16, k = 4;
  const double bytes = 1e8;
  const std::string base = "[cluster]\ntopology = fat-tree\nworkers = 16\nleaf_ports = 4\n";
  const double t_nonblocking = transfer_time(config_of(base), all_to_all(n, bytes));
  const double t_oversubscribed = transfer_time(config_of(base + "oversubscription = 2\n"), all_to_all(n, bytes));
  const double rate = Ib::efficiency * Ib::bandwidth;
  // Inter-leaf flows start after the 4-link latency; intra-leaf ones 2 links' earlier (microseconds in 60 ms).
  const double port_bound = (n - 1) * bytes / rate;
  EXPECT_GE(t_nonblocking, port_bound + ib_route_latency(2) - 1e-12);
  EXPECT_LE(t_nonblocking, port_bound + ib_route_latency(4) + 1e-9);
  const int per_uplink = k * (n - k) / 2;
  EXPECT_NEAR(t_oversubscribed, ib_route_latency(4) + per_uplink * bytes / rate, 1e-6 * t_oversubscribed);
  EXPECT_NEAR(t_oversubscribed / t_nonblocking, 2.0 * (n - k) / (n - 1), 1e-4);
}

TEST(MultiGpuNodes, NvlinkInsideANodeTheNicBetweenNodes) {
  const std::string nodes = "[cluster]\nworkers = 16\ngpus_per_node = 8\nintra_node_fabric = " + profile("test-nvlink") + "\n";
  const double bytes = 3e9;
  // Same node: two NVLink ports, NVLink's efficiency.
  EXPECT_NEAR(transfer_time(config_of(nodes), {{0, 1, bytes}}),
              nvlink_ports_latency() + bytes / (NvLink::efficiency * NvLink::bandwidth), 1e-12);
  // Across nodes: the NICs limit, at InfiniBand's efficiency; a GPU reaches its NIC over PCIe, so the
  // NVLink ports add neither latency nor a share.
  EXPECT_NEAR(transfer_time(config_of(nodes), {{0, 8, bytes}}), ib_route_latency(2) + bytes / (Ib::efficiency * Ib::bandwidth),
              1e-9);
}

// Whether a GPU's network traffic shares its port into the node's fabric depends on that fabric. NVLink
// carries traffic between GPUs only (a GPU reaches its NIC over PCIe): a GPU sending to a GPU of its node
// and to one of another node at once gets each at its full rate. A PCIe fabric inside the node is also the
// GPU's way to its NIC: the two flows share the port. Both nodes' port: 30 GB/s nominal at 0.8 (24 GB/s).
TEST(MultiGpuNodes, NetworkTrafficSharesAPciePortButNotAnNvlinkPort) {
  for (const char* name : {"slow-nvlink", "slow-pcie"}) {
    const std::string protocol = std::string(name) == "slow-nvlink" ? "nvlink" : "pcie";
    std::ofstream(test_profile_dir() + "/" + name + ".ini")
        << "[fabric]\nname = " << name << "\nbandwidth = 30GB/s\nlink_latency = 0.3us\nswitch_latency = 100ns\n"
        << "efficiency = 0.8\nprotocol = " << protocol << "\n";
  }
  const auto nodes = [](const std::string& fabric) {
    return "[cluster]\nworkers = 16\ngpus_per_node = 8\nintra_node_fabric = " + profile(fabric) + "\n";
  };
  const double bytes = 1.2e9;
  const double port_latency = 0.3e-6 + 100e-9 / 2;
  const double intra_rate = 0.8 * 30e9;                                  // alone on the port
  const double network_rate = Ib::efficiency * Ib::bandwidth;            // 24 GB/s: the NIC limits
  const std::vector<std::tuple<int, int, double>> both = {{0, 1, bytes}, {0, 8, bytes}};
  // NVLink: nothing shared; the later of the two alone.
  const double nvlink = std::max(2 * port_latency + bytes / intra_rate, ib_route_latency(2) + bytes / network_rate);
  EXPECT_NEAR(transfer_time(config_of(nodes("slow-nvlink")), both), nvlink, 1e-9);
  // PCIe: the two flows share the port's 30 GB/s nominal, in SimGrid's CM02 model in inverse proportion to
  // their route latencies (the intra-node route: two ports; the network route: two ports and the IB route),
  // each share then times its route's factor (0.8 inside the node; 24/25 = 0.96 for the network flow, whose
  // slowest link is the NIC's 25 GB/s). The intra-node flow ends first; the network flow finishes alone at
  // 24 GB/s.
  const double intra_route = 2 * port_latency, network_route = 2 * port_latency + ib_route_latency(2);
  const double intra_share = 30e9 * (1 / intra_route) / (1 / intra_route + 1 / network_route);
  const double first = bytes / (0.8 * intra_share);
  const double pcie = first + (bytes - 0.96 * (30e9 - intra_share) * first) / network_rate;
  const double shared = transfer_time(config_of(nodes("slow-pcie")), both);
  EXPECT_NEAR(shared, pcie, 1e-4 * pcie);
  EXPECT_GT(shared, 1.05 * nvlink);
}

// A worker's own link (what `link N` in faults.events and background.link_profile act on) is its way to the
// network: on an NVLink node, the GPU's link to its NIC. With it off, the GPU's transfers to another node
// fail and those to a GPU of its node still arrive.
TEST(MultiGpuNodes, AWorkersOwnLinkIsItsWayToTheNetwork) {
  const std::string nodes = "[cluster]\nworkers = 16\ngpus_per_node = 8\nintra_node_fabric = " + profile("test-nvlink") + "\n";
  const auto j = in_platform(config_of(nodes), [](sg4::Engine& engine, const Platform& p) {
    nlohmann::json out;
    out["link"] = p.worker_links[0]->get_name();
    sg4::Actor::create("probe", p.workers[0], [&] {
      for (sg4::Link* l : link_directions(p.worker_links[0])) l->turn_off();
      for (const int peer : {1, 8}) {
        try {
          sg4::Comm::sendto(p.workers[0], p.workers[peer], 1000);
          out[std::to_string(peer)] = "delivered";
        } catch (const simgrid::NetworkFailureException&) {
          out[std::to_string(peer)] = "failed";
        }
      }
    });
    engine.run();
    return out;
  });
  EXPECT_EQ(j["link"], "worker0.to-nic");
  EXPECT_EQ(j["1"], "delivered");
  EXPECT_EQ(j["8"], "failed");
}

// Eight GPUs of node 0 send to their peers on node 1 at once: with one NIC per node they share it (8×
// slower than one flow); with a NIC per GPU on rails each pair has its own.
TEST(MultiGpuNodes, OneNicIsSharedAPerGpuNicIsNot) {
  const std::string nodes = "[cluster]\ntopology = fat-tree\nworkers = 16\ngpus_per_node = 8\nintra_node_fabric = " +
                            profile("test-nvlink") + "\n";
  std::vector<std::tuple<int, int, double>> pairs;
  const double bytes = 1e9;
  for (int g = 0; g < 8; ++g) pairs.emplace_back(g, 8 + g, bytes);
  const double one = bytes / (Ib::efficiency * Ib::bandwidth);
  const double latency = ib_route_latency(2);
  EXPECT_NEAR(transfer_time(config_of(nodes), pairs), latency + 8 * one, 1e-9);
  EXPECT_NEAR(transfer_time(config_of(nodes + "nics_per_node = 8\nrail_optimized = true\n"), pairs), latency + one, 1e-9);
}

TEST(TwoSitesTiming, TheWanLimitsAndItsTcpWindowToo) {
  const std::string wan = "[cluster]\ntopology = two-sites\nworkers = 4\nwan_profile = " + profile("test-wan") + "\n";
  const double bytes = 1e9;
  // A short WAN: the WAN's bandwidth at its efficiency.
  const double short_latency = 2 * ib_route_latency(2) + 10e-6 + 2 * Wan::sw;
  EXPECT_NEAR(transfer_time(config_of(wan + "wan_latency = 10us\n"), {{0, 3, bytes}}),
              short_latency + bytes / (Wan::efficiency * Wan::bandwidth), 1e-9);
  // From the profile, the WAN is a route through its fabric, two of its 5 ms links one way: SimGrid's TCP
  // window (network/TCP-gamma, 4 MiB) caps a flow at γ / (2 × route latency), below the WAN's bandwidth.
  const double latency = 2 * ib_route_latency(2) + 2 * Wan::link + 2 * Wan::sw;
  const double window_rate = 4194304.0 / (2 * latency);
  EXPECT_NEAR(transfer_time(config_of(wan), {{0, 3, bytes}}), latency + bytes / (Wan::efficiency * window_rate),
              1e-6);
}

// Each group's hosts run at its GPU's sustained speed: peak of the math mode × the profile's efficiency.
TEST(MixedGroups, HostsRunAtTheirGpusSustainedSpeed) {
  const std::string groups = "[cluster]\nworkers = 4\ngroups = a100:2:a100-40gb; v100:2:" + profile("test-v100") + "\n";
  for (const std::string math : {"fp32", "bf16"}) {
    const RunConfig c = config_of(groups + "[compute]\nmath = " + math + "\n");
    const double flops = 1e13;
    const auto j = in_platform(c, [&](sg4::Engine& engine, const Platform& p) {
      auto done = std::make_shared<std::vector<double>>(p.workers.size());
      for (size_t r = 0; r < p.workers.size(); ++r)
        sg4::Actor::create("w" + std::to_string(r), p.workers[r], [done, r, flops] {
          sg4::this_actor::execute(flops);
          (*done)[r] = sg4::Engine::get_clock();
        });
      engine.run();
      return nlohmann::json(*done);
    });
    const double a100 = math == "fp32" ? 19.5e12 * 0.5 : 312e12 * 0.5;
    const double v100 = math == "fp32" ? 15.7e12 * 0.4 : 125e12 * 0.4;
    EXPECT_NEAR(j[0].get<double>(), flops / a100, 1e-9) << math;
    EXPECT_NEAR(j[1].get<double>(), flops / a100, 1e-9) << math;
    EXPECT_NEAR(j[2].get<double>(), flops / v100, 1e-9) << math;
    EXPECT_NEAR(j[3].get<double>(), flops / v100, 1e-9) << math;
  }
}

// network.model = ib: the fabric's calibration replaces SMPI's size-dependent factors (an isolated flow
// takes what it takes under CM02), and the incast/outcast penalties slow an all-to-all down.
TEST(IbModel, SameIsolatedFlowsSlowerAllToAll) {
  const std::string star = "[cluster]\nworkers = 4\n";
  const double single_cm02 = transfer_time(config_of(star), {{0, 1, 1e8}});
  const double single_ib = transfer_time(config_of(star, {"network.model=ib"}), {{0, 1, 1e8}});
  EXPECT_NEAR(single_ib, single_cm02, 1e-12);
  EXPECT_NEAR(single_cm02, ib_route_latency(2) + 1e8 / (Ib::efficiency * Ib::bandwidth), 1e-12);
  const double a2a_cm02 = transfer_time(config_of(star), all_to_all(4, 1e8));
  const double a2a_ib = transfer_time(config_of(star, {"network.model=ib"}), all_to_all(4, 1e8));
  EXPECT_NEAR(a2a_cm02, 3 * 1e8 / (Ib::efficiency * Ib::bandwidth), 1e-5);
  EXPECT_GT(a2a_ib, 1.2 * a2a_cm02);
}

}  // namespace
}  // namespace dtsim::sim
