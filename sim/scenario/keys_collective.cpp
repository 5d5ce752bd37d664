// Scenario keys: collectives.
#include "sim/scenario/key_registry.hpp"

namespace dtsim::sim {

using namespace key_builders;

void add_collective_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      // ---- collective -------------------------------------------------------------------------------------
      choice("collective.algorithm", "ring", {"ring"},
             "Allreduce algorithm: ring = reduce-scatter then all-gather around a ring, 2(N-1) steps"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
