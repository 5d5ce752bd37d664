// The platform of the federated timing tests: `clients` clients on an ideal star whose GPUs do 1 GFLOP/s,
// so that local steps and transfers have round, hand-computable durations.
#pragma once

#include <string>

#include "sim/app/run.hpp"

namespace dtsim::sim::testing {

inline RunInputs federated_star_run(const std::string& name, int clients, double bandwidth, const FlConfig& fl) {
  RunInputs in;
  RunConfig& c = in.config;
  c.name = name;
  c.seed = 7;
  c.workers = clients;
  c.gpu = {"test-gpu", 1e9, 1e9, 1e9, 40e9, 1.0};
  c.fabric = {"test-fabric", bandwidth, 1e-6, 0.0, 1.0};
  c.strategy = Strategy::Federated;
  c.lr = 0.01;
  c.momentum = 0.0;
  c.batch_per_worker = 1;
  c.fl = fl;
  in.length = {1, fl.rounds};
  return in;
}

}  // namespace dtsim::sim::testing
