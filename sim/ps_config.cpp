#include "ps_config.hpp"

#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

PsConfig make_ps_config(const Scenario& scenario) {
  (void)scenario;
  return {};
}

}  // namespace dtsim::sim
