// The training strategies as the configuration sees them: one name table and one descriptor per strategy,
// so that no other file compares a strategy's name. What a strategy *does* lives in sim/strategies/; how it
// is created is that layer's registry (sim/strategies/registry.cpp).
#pragma once

#include <string>
#include <vector>

#include "models/name_table.hpp"

namespace dtsim::sim {

enum class Strategy { Sync, Local, AsyncPs, Federated };

struct StrategyDescriptor {
  Strategy strategy;
  const char* name;  // as training.strategy spells it
  // Scenario sections that only some strategies read; the ones listed here are this strategy's. A key of such
  // a section set for another strategy has no effect (sim/config/ignored_keys.cpp warns about it).
  std::vector<std::string> own_sections;
  // Workers combine every step's gradients in one group (an allreduce or all-gather): micro-batch
  // accumulation, a compressed majority vote and predivided narrow sums exist only there, and loss-scaled
  // gradients would reach the compressor still scaled.
  bool synchronous_group;
  // Each worker trains on its own batches of its own shard (federated clients), so one worker's batch must fit
  // the data, not the global batch of all workers.
  bool per_worker_batch;
  // The strategy reacts to [faults] events (a restart, elastic membership, or dropping a client); the others
  // refuse them.
  bool survives_faults;
  // The run advances in rounds, each a unit of its own (federated): an epoch count such as
  // compression.start_epoch counts rounds, not passes over the data.
  bool steps_are_rounds;
  // Hosts the platform adds beyond the workers: parameter-server shards take ps.servers, an aggregator one.
  enum class Servers { None, PsShards, One } servers;
  // What a row's `step` counts (metrics.csv, progress lines): optimizer steps, the parameter server's updates
  // (one per applied gradient, or per gradients_per_update of them), or rounds.
  const char* row_step;
};

const std::vector<StrategyDescriptor>& strategy_registry();
const StrategyDescriptor& strategy_descriptor(Strategy strategy);
const models::NameTable<Strategy>& strategy_table();
std::vector<std::string> strategy_names();  // sync, local, async-ps, federated
const char* to_string(Strategy strategy);

// Every section that some strategy owns (the union of own_sections), in registry order.
std::vector<std::string> strategy_owned_sections();

// Whether `strategy` reads the keys of `section` (one of strategy_owned_sections()).
bool reads_section(Strategy strategy, const std::string& section);

// Extra hosts the platform needs for `strategy`, given ps.servers.
int server_hosts(Strategy strategy, int ps_servers);

}  // namespace dtsim::sim
