#include "fl_config.hpp"

#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

FlConfig make_fl_config(const Scenario& scenario) {
  (void)scenario;
  return {};
}

}  // namespace dtsim::sim
