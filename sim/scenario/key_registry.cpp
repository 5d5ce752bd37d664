#include "sim/scenario/key_registry.hpp"

namespace dtsim::sim {

// The keys in documentation order: each area of the simulator lists its own in its own file.
std::vector<KeySpec> build_key_registry() {
  std::vector<KeySpec> keys;
  add_run_keys(keys);
  add_cluster_keys(keys);
  add_heterogeneity_keys(keys);
  add_hardware_keys(keys);
  add_numerics_keys(keys);
  add_sync_keys(keys);
  add_ps_keys(keys);
  add_fl_keys(keys);
  add_compression_keys(keys);
  add_collective_keys(keys);
  add_output_keys(keys);
  return keys;
}

}  // namespace dtsim::sim
