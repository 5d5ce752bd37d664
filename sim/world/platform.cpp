#include "sim/world/platform.hpp"

#include <malloc.h>

#include <algorithm>
#include <string>

namespace dtsim::sim {

std::unique_ptr<sg4::Engine> create_engine(const NetworkSettings& settings) {
  // SimGrid reads its configuration from argv; these strings must outlive the engine's parsing only.
  static std::vector<std::string> args;
  args = {"dtsim",
          "--log=root.thres:warning",  // keep SimGrid's per-setting INFO lines out of dtsim's output
          std::string("--cfg=network/model:") + simgrid_model_name(settings.model),
          std::string("--cfg=network/crosstraffic:") + (settings.crosstraffic ? "1" : "0"),
          "--cfg=network/TCP-gamma:" + std::to_string(settings.tcp_window),
          // SimGrid 3.32's default lazy update of the sharing gives some flows more than their max-min share
          // when flows with different bottlenecks cross (README, "Collectives"); the full update is exact.
          "--cfg=network/optim:Full"};
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer cannot follow SimGrid's own context switches (an actor's stack is a block SimGrid swaps
  // to): after an exception unwinds an actor, stale poison stays on its stack and later reads as
  // "stack-use-after-scope" in code that did nothing wrong. As threads, actors have stacks ASan knows.
  args.push_back("--cfg=contexts/factory:thread");
#endif
  if (settings.ranks > kManyRanks) {
    args.push_back("--cfg=contexts/guard-size:0");
    args.push_back("--cfg=contexts/stack-size:1024");
    // Without a guard page SimGrid allocates each stack with malloc; glibc would still map every 1 MiB block
    // on its own (its mmap threshold is 128 KiB), so raise the threshold above the stack size.
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  return std::make_unique<sg4::Engine>(&argc, argv.data());
}

Platform worker_group(const Platform& platform, const std::vector<int>& ranks) {
  Platform g;
  g.servers = platform.servers;
  g.description = platform.description;
  g.calibration = platform.calibration;
  g.routes = platform.routes;
  g.analytic_links = platform.analytic_links;
  std::vector<int> node_index(platform.workers_of_node.size(), -1);
  for (const int r : ranks) {
    const int node = platform.node_of_worker.at(r);
    if (node_index[node] < 0) {
      node_index[node] = static_cast<int>(g.workers_of_node.size());
      g.workers_of_node.emplace_back();
    }
    const int slot = static_cast<int>(g.workers.size());
    g.workers.push_back(platform.workers.at(r));
    g.worker_links.push_back(r < static_cast<int>(platform.worker_links.size()) ? platform.worker_links[r] : nullptr);
    g.node_of_worker.push_back(node_index[node]);
    g.workers_of_node[node_index[node]].push_back(slot);
  }
  return g;
}

const RouteCache::Route& RouteCache::route(sg4::Host* from, sg4::Host* to,
                                           const topology::LinkCalibration* calibration) {
  auto [it, added] = routes_.try_emplace({from, to});
  Entry& e = it->second;
  if (added) from->route_to(to, e.route.links, &e.route.latency);
  if (added || e.calibration != calibration) {
    e.route.factor = calibration ? calibration->factor(e.route.links) : 1.0;
    e.calibration = calibration;
  }
  return e.route;
}

double route_latency(sg4::Host* from, sg4::Host* to) {
  std::vector<sg4::Link*> links;
  double latency = 0.0;
  from->route_to(to, links, &latency);
  return latency;
}

}  // namespace dtsim::sim
