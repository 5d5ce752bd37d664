// Where each key of a scenario got its value, without the values: what the checks that run after
// configuration (cross-section rules, dataset loading, numerics) need to point an error at the key a user
// would change, so that nothing after configuration has to hold the raw scenario.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/scenario/errors.hpp"

namespace dtsim::sim {

class KeyOrigins {
 public:
  KeyOrigins() = default;
  KeyOrigins(std::string scenario_path, std::map<std::string, Origin> origins)
      : scenario_path_(std::move(scenario_path)), origins_(std::move(origins)) {}

  const std::string& scenario_path() const { return scenario_path_; }

  // The key's origin; a default's for a key that is not known.
  const Origin& of(const std::string& key) const;

  // Set in the scenario file or with --set (not a default, not a profile's value).
  bool set_by_user(const std::string& key) const;

  // An InputError located where `key` was set; a default points at the scenario file.
  [[noreturn]] void fail(const std::string& key, const std::string& reason, const std::string& hint = "") const;
  // Located at the first of `keys` set on the command line (--set, --vary, a command's flag), else at the first
  // the scenario file set, else at the first a profile set (its file and line), else at the first of them.
  [[noreturn]] void fail_at_set(const std::vector<std::string>& keys, const std::string& reason,
                                const std::string& hint = "") const;

 private:
  std::string scenario_path_;
  std::map<std::string, Origin> origins_;
};

}  // namespace dtsim::sim
