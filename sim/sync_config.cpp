#include "sync_config.hpp"

#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

SyncConfig make_sync_config(const Scenario& scenario) {
  (void)scenario;
  return {};
}

}  // namespace dtsim::sim
