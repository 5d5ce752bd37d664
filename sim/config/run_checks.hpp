// The one validation step for rules that span sections. Each section's module checks what its own keys
// imply; everything that needs two sections (a strategy and the keys it cannot serve, the data and the
// model, the cluster's shape and the servers a strategy adds) is checked here, on the typed RunConfig, and
// reported at the key a user would change.
#pragma once

#include "sim/config/run_config.hpp"
#include "sim/scenario/key_origins.hpp"

namespace dtsim::sim {

// Throws InputError, located through `origins`, at the first rule the configuration breaks. The rules of
// training (the collective algorithm must implement allreduce) hold for ConfigUse::Training only.
void check_run_config(const RunConfig& config, const KeyOrigins& origins, ConfigUse use = ConfigUse::Training);

}  // namespace dtsim::sim
