// A scenario: every key of the schema with its resolved value and where that value came from.
// Precedence, lowest first: built-in default < profile file < scenario file < --set on the command line.
// Loading validates every value, so the typed getters below cannot fail on user input.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/errors.hpp"
#include "sim/scenario/keys.hpp"

namespace dtsim::sim {

// The folder searched for named profiles: $DTSIM_PROFILE_DIR, else the source tree's network_profiles/.
std::string default_profile_dir();

class Scenario {
 public:
  // Throws InputError naming the file, line and key of the first problem found.
  static Scenario load(const std::string& path, const std::vector<std::string>& overrides,
                       const std::string& profile_dir = default_profile_dir());
  // Same, for scenario text held in memory (`name` stands in for the file name in messages).
  static Scenario parse(const std::string& name, const std::string& content, const std::vector<std::string>& overrides,
                        const std::string& profile_dir = default_profile_dir());

  const std::string& path() const { return path_; }

  bool has(const std::string& key) const;
  const std::string& text(const std::string& key) const;
  int64_t integer(const std::string& key) const;
  double real(const std::string& key) const;
  bool boolean(const std::string& key) const;
  double quantity(const std::string& key) const;  // in the dimension's base unit
  std::vector<int64_t> int_list(const std::string& key) const;
  const Origin& origin(const std::string& key) const;

  // For checks that involve several keys: an InputError located where `key` was set.
  [[noreturn]] void fail(const std::string& key, const std::string& reason, const std::string& hint = "") const;

  // Every key as resolved, grouped by section, quantities in base units.
  nlohmann::json to_json() const;

 private:
  struct Value {
    std::string text;
    Origin origin;
  };
  const Value& value(const std::string& key) const;

  std::string path_;
  std::map<std::string, Value> values_;
};

}  // namespace dtsim::sim
