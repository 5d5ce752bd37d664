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

// Every key dtsim knows, in documentation order.
const std::vector<KeySpec>& all_keys();
const KeySpec* find_key(const std::string& name);
bool is_known_section(const std::string& section);
std::vector<std::string> known_sections();

// Checks `text` against the spec; throws ValueError (reason and hint) when it does not fit.
void validate_value(const KeySpec& spec, const std::string& text);

// Typed parsing of a validated value.
int64_t parse_int(const std::string& text);
double parse_real(const std::string& text);
bool parse_bool(const std::string& text);
std::vector<int64_t> parse_int_list(const std::string& text);

// The closest known key to `name` (edit distance, or the same field in another section), or "".
std::string suggest_key(const std::string& name);
std::string suggest_among(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace dtsim::sim
