// The simulated cluster as strategies and collectives see it: a SimGrid engine configured for dtsim, the
// worker and server hosts, and the routes between them. Building one from the configuration is
// build_platform.hpp's.
#pragma once

#include <simgrid/s4u.hpp>

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/config/hardware_config.hpp"
#include "sim/world/shared_links.hpp"
#include "sim/world/topology/calibration.hpp"

namespace dtsim::sim {

namespace sg4 = simgrid::s4u;

struct NetworkSettings {
  NetworkModel model = NetworkModel::Cm02;
  bool crosstraffic = false;
  // SimGrid's network/TCP-gamma: each flow is capped at window / (2 · route latency). SimGrid has one value for
  // the whole platform; 4 MiB is its default.
  double tcp_window = 4194304.0;
  // Simulated ranks (workers): above kManyRanks, actors get smaller stacks without guard pages (below).
  int ranks = 0;
};

// Each SimGrid actor's stack is a memory map of its own plus a guard page, and Linux allows a process about
// 65530 maps (vm.max_map_count): past about 30 000 actors SimGrid aborts ("Failed to protect stack"). Above
// this many ranks, create_engine gives actors 1 MiB stacks (enough for the numerics inside them) without guard
// pages, taken from the heap rather than one map each.
constexpr int kManyRanks = 8192;

// Creates the process's one SimGrid engine (SimGrid does not support a second one in the same process)
// with dtsim's network model settings and quiet logging.
std::unique_ptr<sg4::Engine> create_engine(const NetworkSettings& settings);

// Routes between hosts as SimGrid computes them, each computed once and shared by every collective over the
// platform (a step of LLaMA-7B on 8,192 GPUs has 131 collectives routing the same pairs). Routes never change
// during a simulation: a link turned off stays on its routes. Single-threaded, as simulations are.
class RouteCache {
 public:
  struct Route {
    std::vector<sg4::Link*> links;
    double latency = 0.0;
    double factor = 1.0;  // the calibration's bandwidth factor along the links (1 without one)
  };
  // The route from `from` to `to`, its factor from `calibration` (may be null).
  const Route& route(sg4::Host* from, sg4::Host* to, const topology::LinkCalibration* calibration);

 private:
  struct Entry {
    Route route;
    const topology::LinkCalibration* calibration = nullptr;  // the factor's
  };
  struct PairHash {
    size_t operator()(const std::pair<sg4::Host*, sg4::Host*>& p) const {
      return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
    }
  };
  std::unordered_map<std::pair<sg4::Host*, sg4::Host*>, Entry, PairHash> routes_;
};

// What strategies and collectives know about the simulated cluster.
struct Platform {
  std::vector<sg4::Host*> workers;              // one per GPU, rank order
  std::vector<int> node_of_worker;              // the server (node) each worker sits in
  std::vector<std::vector<int>> workers_of_node;  // the ranks of each node, ascending
  std::vector<sg4::Link*> worker_links;         // each worker's own link towards the network (see build.cpp)
  std::vector<sg4::Host*> servers;              // extra hosts asked for (parameter servers, aggregators)
  std::string description;                      // one line for people, e.g. "star, 8 × 1 GPU"
  // Each link's achievable fraction of its bandwidth (the flows get it through SimGrid's bandwidth factor);
  // null for a platform built without one, whose flows then get CollectiveOptions::bandwidth_efficiency.
  std::shared_ptr<const topology::LinkCalibration> calibration;
  std::shared_ptr<RouteCache> routes = std::make_shared<RouteCache>();  // shared by worker groups
  // The links concurrent analytic collectives share, per rank set (shared by worker groups).
  std::shared_ptr<SharedLinks> analytic_links = std::make_shared<SharedLinks>();

  int num_workers() const { return static_cast<int>(workers.size()); }
};

// The platform restricted to `ranks` (ascending): those workers renumbered 0..k−1 in that order, their
// nodes renumbered by first appearance. Collectives run on it when only some workers take part (after a
// failure). Servers and the description are kept.
Platform worker_group(const Platform& platform, const std::vector<int>& ranks);

// Latency of the route between two hosts, as SimGrid computes it.
double route_latency(sg4::Host* from, sg4::Host* to);

}  // namespace dtsim::sim
