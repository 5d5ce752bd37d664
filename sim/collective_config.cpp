#include "collective_config.hpp"

#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

CollectiveConfig make_collective_config(const Scenario& scenario) {
  (void)scenario;
  return {};
}

}  // namespace dtsim::sim
