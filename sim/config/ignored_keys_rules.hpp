// The rules find_ignored_keys applies (ignored_keys.cpp), shared between the files that hold them: each says why a
// key has no effect in a configuration, or "" when it has one. Not for use outside those files.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "sim/config/run_config.hpp"

namespace dtsim::sim::ignored_key_rules {

inline std::string section_of(const std::string& key) { return key.substr(0, key.find('.')); }

inline bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// ignored_cluster_keys.cpp: the cluster and its collectives.
bool zero_leaves_no_allreduce(const RunConfig& c);
std::string collective_settings(const std::string& key, const RunConfig& c, const std::vector<CollectiveKind>& kinds);
std::string tuner_settings(const std::string& key, const RunConfig& c, const std::vector<CollectiveKind>& kinds,
                           bool training);
std::string zero_collective_settings(const std::string& key, const RunConfig& c);
std::string single_worker_zero(const std::string& key, const RunConfig& c);
std::string zero3_prefetch_settings(const std::string& key, const RunConfig& c);
std::string single_worker_collectives(const std::string& key, const RunConfig& c);
std::string grouped_gpu_settings(const std::string& key, const RunConfig& c);
std::string hierarchical_without_nodes(const std::string& key, const RunConfig& c);
std::string intra_node_fabric_without_nodes(const std::string& key, const RunConfig& c);
std::string pcie_switch_settings(const std::string& key, const RunConfig& c);
std::string network_in_one_node(const std::string& key, const RunConfig& c);

}  // namespace dtsim::sim::ignored_key_rules
