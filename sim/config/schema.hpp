// dtsim's table of scenario keys, assembled from the config modules (each declares its own sections' keys
// in its *_config.cpp, beside the code that reads them), and the scenario loaders that use it.
#pragma once

#include <string>
#include <vector>

#include "sim/scenario/keys.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

// Built once, in documentation order.
const KeySchema& scenario_schema();
const std::vector<KeySpec>& all_keys();
const KeySpec* find_key(const std::string& name);

// Scenario::load and Scenario::parse with dtsim's schema.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const std::string& profile_dir = default_profile_dir());
Scenario parse_scenario(const std::string& name, const std::string& content,
                        const std::vector<std::string>& overrides,
                        const std::string& profile_dir = default_profile_dir(),
                        const std::vector<std::string>& override_flags = {});

// Each config module appends its sections' keys (in its config/*_config.cpp).
void add_run_keys(std::vector<KeySpec>& keys);
void add_cluster_keys(std::vector<KeySpec>& keys);
void add_heterogeneity_keys(std::vector<KeySpec>& keys);
void add_hardware_keys(std::vector<KeySpec>& keys);
void add_model_keys(std::vector<KeySpec>& keys);     // compute, model (numerics_config.cpp)
void add_qa_model_keys(std::vector<KeySpec>& keys);  // transformer, lora (qa_model_config.cpp)
void add_data_keys(std::vector<KeySpec>& keys);
void add_training_keys(std::vector<KeySpec>& keys);  // training, precision (numerics_config.cpp)
void add_collective_keys(std::vector<KeySpec>& keys);
void add_framework_keys(std::vector<KeySpec>& keys);  // framework (sync_config.cpp)
void add_sync_keys(std::vector<KeySpec>& keys);
void add_ps_keys(std::vector<KeySpec>& keys);
void add_fl_keys(std::vector<KeySpec>& keys);
void add_compression_keys(std::vector<KeySpec>& keys);
void add_workload_keys(std::vector<KeySpec>& keys);
void add_output_keys(std::vector<KeySpec>& keys);

}  // namespace dtsim::sim
