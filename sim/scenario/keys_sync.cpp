// Scenario keys: synchronous data parallel and local SGD.
#include "sim/scenario/key_registry.hpp"

namespace dtsim::sim {

using namespace key_builders;

void add_sync_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
