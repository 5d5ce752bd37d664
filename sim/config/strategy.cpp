#include "sim/config/strategy.hpp"

#include <algorithm>
#include <stdexcept>

namespace dtsim::sim {

// One line per strategy. Adding a strategy: a line here, its implementation in sim/strategies/<family>/, and
// its factory line in sim/strategies/registry.cpp.
const std::vector<StrategyDescriptor>& strategy_registry() {
  using S = StrategyDescriptor::Servers;
  static const std::vector<StrategyDescriptor> registry = {
      {Strategy::Sync, "sync", {"sync"}, true, false, true, false, S::None, "step"},
      {Strategy::Local, "local", {"sync", "local"}, true, false, false, false, S::None, "step"},
      {Strategy::AsyncPs, "async-ps", {"ps"}, false, false, true, false, S::PsShards, "update"},
      {Strategy::Federated, "federated", {"fl"}, false, true, true, true, S::One, "round"},
  };
  return registry;
}

const StrategyDescriptor& strategy_descriptor(Strategy strategy) {
  for (const StrategyDescriptor& d : strategy_registry())
    if (d.strategy == strategy) return d;
  throw std::invalid_argument("strategy_descriptor: a Strategy value without a descriptor");
}

const models::NameTable<Strategy>& strategy_table() {
  static const models::NameTable<Strategy> table = [] {
    std::vector<models::NameTable<Strategy>::Entry> entries;
    for (const StrategyDescriptor& d : strategy_registry()) entries.push_back({d.strategy, d.name});
    return models::NameTable<Strategy>(std::move(entries));
  }();
  return table;
}

std::vector<std::string> strategy_names() { return strategy_table().names(); }
const char* to_string(Strategy strategy) { return strategy_descriptor(strategy).name; }

std::vector<std::string> strategy_owned_sections() {
  std::vector<std::string> sections;
  for (const StrategyDescriptor& d : strategy_registry())
    for (const std::string& s : d.own_sections)
      if (std::find(sections.begin(), sections.end(), s) == sections.end()) sections.push_back(s);
  return sections;
}

bool reads_section(Strategy strategy, const std::string& section) {
  const std::vector<std::string>& own = strategy_descriptor(strategy).own_sections;
  return std::find(own.begin(), own.end(), section) != own.end();
}

int server_hosts(Strategy strategy, int ps_servers) {
  switch (strategy_descriptor(strategy).servers) {
    case StrategyDescriptor::Servers::None: return 0;
    case StrategyDescriptor::Servers::PsShards: return ps_servers;
    case StrategyDescriptor::Servers::One: return 1;
  }
  return 0;
}

}  // namespace dtsim::sim
