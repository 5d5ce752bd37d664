// A scenario: every key of the schema with its resolved value and where that value came from.
// Precedence, lowest first: built-in default < profile file < scenario file < --set on the command line.
// Loading validates every value, so the typed getters below cannot fail on user input.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/scenario/errors.hpp"
#include "sim/scenario/key_origins.hpp"
#include "sim/scenario/keys.hpp"

namespace dtsim::sim {

// The folder an environment variable names, or `fallback` when it is unset or empty. A variable that names no
// folder is an InputError naming the variable (`holds` says what the folder should hold, for the hint).
std::string folder_from_environment(const char* variable, const std::string& fallback, const std::string& holds);

// The folder searched for named profiles: $DTSIM_PROFILE_DIR, else the source tree's network_profiles/.
std::string default_profile_dir();

class Scenario {
 public:
  // Throws InputError naming the file, line and key of the first problem found.
  // `schema` must outlive the scenario (dtsim's is sim/config/schema.hpp's scenario_schema(), and
  // load_scenario() there passes it).
  static Scenario load(const KeySchema& schema, const std::string& path, const std::vector<std::string>& overrides,
                       const std::string& profile_dir = default_profile_dir());
  // Same, for scenario text held in memory (`name` stands in for the file name in messages).
  // `override_flags[i]`, where given, is the command-line flag that stands for overrides[i] (messages name it
  // instead of --set).
  static Scenario parse(const KeySchema& schema, const std::string& name, const std::string& content,
                        const std::vector<std::string>& overrides,
                        const std::string& profile_dir = default_profile_dir(),
                        const std::vector<std::string>& override_flags = {});

  const KeySchema& schema() const { return *schema_; }

  const std::string& path() const { return path_; }

  bool has(const std::string& key) const;
  const std::string& text(const std::string& key) const;
  int64_t integer(const std::string& key) const;
  double real(const std::string& key) const;
  bool boolean(const std::string& key) const;
  double quantity(const std::string& key) const;  // in the dimension's base unit
  std::vector<int64_t> int_list(const std::string& key) const;
  // The key's trimmed text read as a file path, resolved like a profile path: a relative path set in a
  // scenario or profile file is relative to that file's folder, one set on the command line to the working
  // folder.
  std::string file_path(const std::string& key) const;
  const Origin& origin(const std::string& key) const;

  // Where every key's value came from, for checks made after configuration.
  KeyOrigins origins() const;

  // An InputError located where `key` was set.
  [[noreturn]] void fail(const std::string& key, const std::string& reason, const std::string& hint = "") const;
  // For a rule several keys make together: located at the first of `keys` the user set (so that a --set that
  // broke it is blamed, not a key left at its default), else at the first of them.
  [[noreturn]] void fail_at_set(const std::vector<std::string>& keys, const std::string& reason,
                                const std::string& hint = "") const;

  // Every key as resolved, grouped by section, quantities in base units.
  nlohmann::json to_json() const;
  // "key=value" for every key set on the command line, in key order: with the scenario file, what
  // reproduces the run.
  std::vector<std::string> command_line_sets() const;

  // This scenario with the `section` keys ("gpu" or "fabric") taken from another profile: `name` is resolved
  // like `<section>.profile` (a name in the profile folder, or a .ini path relative to the scenario's
  // folder), the section's keys go back to their defaults and the profile's values replace them; overrides
  // in the scenario do not apply. For keys that name a second GPU or fabric (cluster.groups,
  // cluster.intra_node_fabric), so that make_gpu_spec and make_fabric_spec read it. A profile that cannot
  // be found is an InputError at `key`; a bad profile, one at its file and line.
  Scenario with_profile(const std::string& section, const std::string& name, const std::string& key) const;

 private:
  struct Value {
    std::string text;
    Origin origin;
  };
  const Value& value(const std::string& key) const;

  const KeySchema* schema_ = nullptr;
  std::string path_;
  std::string profile_dir_;
  std::map<std::string, Value> values_;
  size_t file_keys_ = 0;  // the keys the scenario text set
  // Keys of a profile section left without a value, with the error that reading one raises: a section may
  // be on no node (under cluster.groups the [gpu] section is), so only reading it is wrong.
  std::map<std::string, InputError> unset_;
};

}  // namespace dtsim::sim
