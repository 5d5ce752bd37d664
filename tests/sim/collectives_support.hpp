// Running one collective on a star in a forked child (one SimGrid engine per process), for the collectives
// tests.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/world/build_platform.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim::testing {

// The engine of every collectives test: dtsim's (CM02, cross-traffic off) with SimGrid's full sharing update.
// The default lazy update of 3.32 hands some flows more than their max-min share when flows with different
// bottlenecks cross (e.g. 8 workers each pushing to 2 servers: one server's flows finish 7x too early).
inline std::unique_ptr<sg4::Engine> create_exact_engine() {
  auto engine = create_engine({NetworkModel::Cm02, false});
  sg4::Engine::set_config("network/optim:Full");
  return engine;
}

// HDR-like: 200 Gb/s ports, 0.6 us links, 130 ns switch, 96 % of nominal bandwidth achievable.
inline FabricSpec hdr_fabric() { return {"HDR-like", 25e9, 0.6e-6, 130e-9, 0.96}; }

struct Case {
  CollectiveKind kind = CollectiveKind::Allreduce;
  Algorithm algorithm = Algorithm::Ring;
  Fidelity fidelity = Fidelity::Stepwise;
  int ranks = 2;
  uint64_t bytes = 0;
  CollectiveOptions options;
};

struct Outcome {
  double seconds = 0.0;    // when the last rank finished
  double alpha = 0.0;      // route latency between two workers
  double bandwidth = 0.0;  // B the fidelities compute (link bandwidth × efficiency)
  double bytes_sent = 0.0;
  double bytes_per_call = 0.0;
  double predicted = 0.0;  // the collective's own α-β prediction
  double resolved_fidelity = 0.0;
};

// The α-β parameters of a star built from `f`: a route is two links and one switch.
inline AlphaBeta star_link(const FabricSpec& f) {
  return {2 * f.link_latency + f.switch_latency, f.bandwidth * f.efficiency};
}

inline Outcome simulate_on_star(const Case& c, const FabricSpec& fabric = hdr_fabric()) {
  const std::string out = dtsim::testing::run_in_child([&] {
    auto engine = create_exact_engine();
    const Platform p = build_star(c.ranks, 1e12, fabric);
    install_fabric_calibration(*engine, fabric);
    CollectiveOptions options = c.options;
    options.bandwidth_efficiency = fabric.efficiency;
    auto collective = make_collective(c.kind, c.algorithm, c.fidelity, p, "test", options);
    std::vector<double> finished(c.ranks, 0.0);
    for (int r = 0; r < c.ranks; ++r)
      sg4::Actor::create("rank" + std::to_string(r), p.workers[r], [&, r] {
        collective->run(r, c.bytes);
        finished[r] = sg4::Engine::get_clock();
      });
    engine->run();
    Outcome o;
    o.seconds = *std::max_element(finished.begin(), finished.end());
    o.alpha = c.ranks > 1 ? route_latency(p.workers[0], p.workers[1]) : 0.0;
    o.bandwidth = fabric.bandwidth * fabric.efficiency;
    o.bytes_sent = static_cast<double>(collective->bytes_sent());
    o.bytes_per_call = static_cast<double>(collective->bytes_per_call(c.bytes));
    o.predicted = collective->predicted_seconds(c.bytes);
    o.resolved_fidelity = static_cast<double>(collective->fidelity());
    return dtsim::testing::to_bytes(std::vector<Outcome>{o});
  });
  return dtsim::testing::from_bytes<Outcome>(out).at(0);
}

// Every (collective, algorithm) pair with a flat closed form: the cases the timing tests sweep.
inline std::vector<std::pair<CollectiveKind, Algorithm>> flat_collectives() {
  return {{CollectiveKind::Allreduce, Algorithm::Ring},          {CollectiveKind::Allreduce, Algorithm::DoubleBinaryTree},
          {CollectiveKind::Allreduce, Algorithm::HalvingDoubling}, {CollectiveKind::ReduceScatter, Algorithm::Ring},
          {CollectiveKind::AllGather, Algorithm::Ring},          {CollectiveKind::Broadcast, Algorithm::Ring},
          {CollectiveKind::Reduce, Algorithm::Ring},             {CollectiveKind::AllToAll, Algorithm::Direct}};
}

inline std::string case_name(CollectiveKind kind, Algorithm algorithm, int ranks) {
  std::string name = std::string(to_string(kind)) + "_" + to_string(algorithm) + "_N" + std::to_string(ranks);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace dtsim::sim::testing
