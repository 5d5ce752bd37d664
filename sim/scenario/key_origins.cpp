#include "sim/scenario/key_origins.hpp"

namespace dtsim::sim {

const Origin& KeyOrigins::of(const std::string& key) const {
  static const Origin kDefault = Origin::default_value();
  const auto it = origins_.find(key);
  return it == origins_.end() ? kDefault : it->second;
}

bool KeyOrigins::set_by_user(const std::string& key) const {
  const Origin& where = of(key);
  return where.command_line || (!where.file.empty() && where.file == scenario_path_);
}

void KeyOrigins::fail(const std::string& key, const std::string& reason, const std::string& hint) const {
  const Origin& where = of(key);
  // A default has no line of its own: point at the scenario file instead.
  throw InputError(where.file.empty() && !where.command_line ? Origin::at(scenario_path_, 0) : where, key, reason,
                   hint);
}

void KeyOrigins::fail_at_set(const std::vector<std::string>& keys, const std::string& reason,
                             const std::string& hint) const {
  // The command line first (the --set or --vary that broke a rule the file kept), then the scenario file.
  for (const std::string& key : keys)
    if (of(key).command_line) fail(key, reason, hint);
  for (const std::string& key : keys)
    if (set_by_user(key)) fail(key, reason, hint);
  // Then a profile's line: the file that gave the value is the one to change.
  for (const std::string& key : keys)
    if (!of(key).file.empty()) fail(key, reason, hint);
  fail(keys.front(), reason, hint);
}

}  // namespace dtsim::sim
