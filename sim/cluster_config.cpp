#include "cluster_config.hpp"

#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

ClusterConfig make_cluster_config(const Scenario& scenario) {
  (void)scenario;
  return {};
}

}  // namespace dtsim::sim
