#include "heterogeneity_config.hpp"

#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

HeterogeneityConfig make_heterogeneity_config(const Scenario& scenario) {
  (void)scenario;
  return {};
}

}  // namespace dtsim::sim
