#include "sim/config/schema.hpp"

namespace dtsim::sim {
namespace {

// The keys in documentation order: each config module lists its own in its own file.
std::vector<KeySpec> build_keys() {
  std::vector<KeySpec> keys;
  add_run_keys(keys);
  add_cluster_keys(keys);
  add_heterogeneity_keys(keys);
  add_hardware_keys(keys);
  add_model_keys(keys);
  add_qa_model_keys(keys);
  add_data_keys(keys);
  add_training_keys(keys);
  add_framework_keys(keys);
  add_sync_keys(keys);
  add_ps_keys(keys);
  add_fl_keys(keys);
  add_compression_keys(keys);
  add_collective_keys(keys);
  add_workload_keys(keys);
  add_output_keys(keys);
  return keys;
}

}  // namespace

const KeySchema& scenario_schema() {
  static const KeySchema schema(build_keys());
  return schema;
}

const std::vector<KeySpec>& all_keys() { return scenario_schema().keys(); }
const KeySpec* find_key(const std::string& name) { return scenario_schema().find(name); }

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const std::string& profile_dir) {
  return Scenario::load(scenario_schema(), path, overrides, profile_dir);
}

Scenario parse_scenario(const std::string& name, const std::string& content, const std::vector<std::string>& overrides,
                        const std::string& profile_dir, const std::vector<std::string>& override_flags) {
  return Scenario::parse(scenario_schema(), name, content, overrides, profile_dir, override_flags);
}

}  // namespace dtsim::sim
