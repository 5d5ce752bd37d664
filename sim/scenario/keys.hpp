// The schema of scenario files: every key, its type, unit, default, valid range and meaning. `dtsim keys`
// prints this table, the parser validates against it, and summary.json echoes every key as resolved.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/scenario/units.hpp"

namespace dtsim::sim {

enum class ValueType { Int, Real, Bool, Text, Choice, Quantity, IntList };

struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;
  bool contains(double v) const;
  bool bounded() const;
  std::string describe() const;  // "(0, 1]", ">= 1", "any"
};

struct KeySpec {
  std::string name;  // "section.field"
  ValueType type = ValueType::Text;
  Dimension dim = Dimension::Time;  // for Quantity
  std::string default_text;         // empty: no built-in default (a profile or the scenario must set it)
  Range range;                      // for Int, Real, Quantity and each IntList element
  std::vector<std::string> choices;  // for Choice
  std::string help;
  bool optional = false;  // may stay unset (an empty default is then a valid value)

  std::string section() const;
  std::string field() const;
  std::string type_name() const;  // "int", "real", "bool", "string", "choice", "bandwidth", "int list", …
  std::string unit() const;       // base unit of a quantity, else ""
};

// A table of keys, in documentation order. The scenario language knows no key of its own: the config layer
// builds dtsim's table (sim/config/schema.hpp) and hands it to the parser.
class KeySchema {
 public:
  explicit KeySchema(std::vector<KeySpec> keys) : keys_(std::move(keys)) {}
  const std::vector<KeySpec>& keys() const { return keys_; }
  const KeySpec* find(const std::string& name) const;
  std::vector<std::string> sections() const;  // in order of first appearance
  bool has_section(const std::string& section) const;
  // The closest known key to `name`, or "": the same field in another section, else the nearest name by edit
  // distance, else the nearest field of name's own section. With `only_section`, among that section's keys only
  // (a profile holds one section).
  std::string suggest(const std::string& name, const std::string& only_section = "") const;

 private:
  std::vector<KeySpec> keys_;
};

// Checks `text` against the spec; throws ValueError (reason and hint) when it does not fit.
void validate_value(const KeySpec& spec, const std::string& text);

// Typed parsing of a validated value.
int64_t parse_int(const std::string& text);
double parse_real(const std::string& text);
bool parse_bool(const std::string& text);
std::vector<int64_t> parse_int_list(const std::string& text);

// The closest of `candidates` to `word` by edit distance (case-insensitive), or "" when none is close.
std::string suggest_among(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace dtsim::sim
