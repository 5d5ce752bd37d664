// The asynchronous parameter server: shards, staleness control and staleness-aware learning rates.
#pragma once

#include <string>

#include "models/staleness.hpp"

namespace dtsim::sim {

class Scenario;
struct RunConfig;

struct PsConfig {
  int servers = 1;                // server shards, each on its own dedicated host
  int staleness_bound = -1;       // bounded staleness s (a shard holds pulls that could exceed it); -1 = none
  int gradients_per_update = 1;   // n-softsync: a shard applies the average of this many gradients; 1 = async
  models::StalenessRule staleness_lr = models::StalenessRule::None;
  double staleness_exponent = 0.5;  // polynomial exponent a, hinge slope a
  double staleness_threshold = 4.0; // hinge: staleness up to this keeps the full rate

  bool bounded() const { return staleness_bound >= 0; }
};

// Reads the ps.* keys. The combinations the server cannot run (bounded staleness with softsync, link
// failures) are refused with the other cross-section rules (run_checks.hpp), when the strategy is async-ps.
PsConfig make_ps_config(const Scenario& scenario);

// Extra hosts the platform needs for a strategy: the server shards of async-ps, federated learning's
// aggregator, else none.
int server_hosts(const RunConfig& config);

}  // namespace dtsim::sim
