// Scenario keys: the cluster's shape.
#include "sim/scenario/key_registry.hpp"

namespace dtsim::sim {

using namespace key_builders;

void add_cluster_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      // ---- cluster --------------------------------------------------------------------------------------
      integer("cluster.workers", "8", between(1, 65536), "Number of simulated workers (one GPU each)"),
      choice("cluster.topology", "star", {"star"}, "Network topology: star = every worker on one non-blocking switch"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
