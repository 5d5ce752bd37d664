#include "sim/scenario/keys.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "sim/scenario/text.hpp"

namespace dtsim::sim {
namespace {

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

void check_range(const KeySpec& spec, double v, const std::string& shown) {
  if (!spec.range.contains(v))
    throw ValueError(shown + " is out of range", "must be " + spec.range.describe());
}

}  // namespace

// ---- Range --------------------------------------------------------------------------------------------------
bool Range::contains(double v) const {
  if (std::isnan(v)) return false;
  if (lo_open ? !(v > lo) : !(v >= lo)) return false;
  if (hi_open ? !(v < hi) : !(v <= hi)) return false;
  return true;
}

bool Range::bounded() const { return std::isfinite(lo) || std::isfinite(hi); }

std::string Range::describe() const {
  const bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
  if (has_lo && has_hi)
    return std::string(lo_open ? "(" : "[") + number_text(lo) + ", " + number_text(hi) + (hi_open ? ")" : "]");
  if (has_lo) return std::string(lo_open ? "> " : ">= ") + number_text(lo);
  if (has_hi) return std::string(hi_open ? "< " : "<= ") + number_text(hi);
  return "any";
}

// ---- KeySpec ------------------------------------------------------------------------------------------------
std::string KeySpec::section() const { return name.substr(0, name.find('.')); }
std::string KeySpec::field() const { return name.substr(name.find('.') + 1); }

std::string KeySpec::type_name() const {
  switch (type) {
    case ValueType::Int: return "int";
    case ValueType::Real: return "real";
    case ValueType::Bool: return "bool";
    case ValueType::Text: return "string";
    case ValueType::Choice: return "choice";
    case ValueType::IntList: return "int list";
    case ValueType::Quantity:
      switch (dim) {
        case Dimension::Time: return "time";
        case Dimension::Bandwidth: return "bandwidth";
        case Dimension::FlopRate: return "flop rate";
        case Dimension::Bytes: return "size";
        case Dimension::Power: return "power";
      }
  }
  return "?";
}

std::string KeySpec::unit() const { return type == ValueType::Quantity ? base_unit(dim) : ""; }

// ---- KeySchema -----------------------------------------------------------------------------------------------
const KeySpec* KeySchema::find(const std::string& name) const {
  for (const KeySpec& k : keys_)
    if (k.name == name) return &k;
  return nullptr;
}

std::vector<std::string> KeySchema::sections() const {
  std::vector<std::string> out;
  for (const KeySpec& k : keys_)
    if (std::find(out.begin(), out.end(), k.section()) == out.end()) out.push_back(k.section());
  return out;
}

bool KeySchema::has_section(const std::string& section) const {
  const auto s = sections();
  return std::find(s.begin(), s.end(), section) != s.end();
}

// ---- values -------------------------------------------------------------------------------------------------
namespace {
// Decimal notation only: strtod also reads hexadecimal ("0x10", "0x1p-4"), which no hint offers.
bool decimal_notation(const std::string& s) {
  return s.find_first_not_of("0123456789+-.eE") == std::string::npos;
}
}  // namespace

int64_t parse_int(const std::string& text) {
  const std::string s = trim(text);
  if (s.empty()) throw ValueError("empty value", "write an integer");
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0') {
    // Accept integral values written in scientific notation (1e6), which users write for sample counts.
    if (!decimal_notation(s)) throw ValueError("'" + s + "' is not an integer", "write a whole number such as 8");
    const double d = std::strtod(s.c_str(), &end);
    if (*end == '\0' && std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
    throw ValueError("'" + s + "' is not an integer", "write a whole number such as 8");
  }
  if (errno == ERANGE) throw ValueError("'" + s + "' is too large", "");
  return v;
}

double parse_real(const std::string& text) {
  const std::string s = trim(text);
  if (s.empty()) throw ValueError("empty value", "write a number such as 0.05");
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (*end != '\0' || (!decimal_notation(s) && std::isfinite(v)))
    throw ValueError("'" + s + "' is not a number", "write a number such as 0.05 or 1e-3");
  if (!std::isfinite(v)) throw ValueError("'" + s + "' is not a finite number", "");
  return v;
}

bool parse_bool(const std::string& text) {
  const std::string s = lower(trim(text));
  if (s == "true" || s == "yes" || s == "on" || s == "1") return true;
  if (s == "false" || s == "no" || s == "off" || s == "0") return false;
  throw ValueError("'" + trim(text) + "' is not a boolean", "write true or false");
}

std::vector<int64_t> parse_int_list(const std::string& text) {
  std::vector<int64_t> out;
  const std::string s = trim(text);
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    const size_t comma = s.find(',', start);
    const std::string item = trim(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (item.empty()) throw ValueError("empty element in list '" + s + "'", "write e.g. 256,128");
    out.push_back(parse_int(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

namespace {

// The parser (units.cpp) caps each dimension's magnitude; a positive value far below anything physical is
// as sure a typo (1e-9B/s: a transfer would take longer than the simulation can count), so it is refused here.
struct PhysicalFloor {
  double min_positive;  // 0 keeps its "unset" meaning where a key allows it
  const char* what;
};

PhysicalFloor physical_floor(Dimension d) {
  switch (d) {
    case Dimension::Bandwidth: return {1.0, "bandwidth"};
    case Dimension::FlopRate: return {1.0, "FLOP rate"};
    default: return {0.0, "value"};
  }
}

void check_physical(const KeySpec& spec, double v, const std::string& shown) {
  const PhysicalFloor floor = physical_floor(spec.dim);
  if (v > 0 && v < floor.min_positive)
    throw ValueError(shown + " is too small to be a physical " + std::string(floor.what),
                     "at least " + format_quantity(floor.min_positive, spec.dim) + "; check the exponent and the unit");
}

}  // namespace

void validate_value(const KeySpec& spec, const std::string& text) {
  const std::string s = trim(text);
  switch (spec.type) {
    case ValueType::Int:
      if (spec.optional && s.empty()) break;  // an optional whole number left unset
      check_range(spec, static_cast<double>(parse_int(s)), s);
      break;
    case ValueType::Real: check_range(spec, parse_real(s), s); break;
    case ValueType::Bool: parse_bool(s); break;
    case ValueType::Text:
      if (s.empty() && !spec.optional) throw ValueError("empty value", "");
      break;
    case ValueType::Choice:
      if (std::find(spec.choices.begin(), spec.choices.end(), s) == spec.choices.end()) {
        std::string list;
        for (const auto& c : spec.choices) list += (list.empty() ? "" : ", ") + c;
        const std::string near = suggest_among(s, spec.choices);
        throw ValueError("'" + s + "' is not a valid choice",
                         (near.empty() ? "" : "did you mean '" + near + "'? ") + "valid: " + list);
      }
      break;
    case ValueType::Quantity: {
      const double v = parse_quantity(s, spec.dim);
      if (!spec.range.contains(v))
        throw ValueError(s + " is out of range", "must be " + spec.range.describe() + " " + spec.unit());
      check_physical(spec, v, s);
      break;
    }
    case ValueType::IntList:
      for (const int64_t v : parse_int_list(s)) check_range(spec, static_cast<double>(v), std::to_string(v));
      break;
  }
}

std::string suggest_among(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  const std::string lowered = lower(word);
  for (const auto& c : candidates) {
    // The distance is at least the difference in length: a long word (a pasted line, a 1 MB key) is compared
    // with nothing rather than at a cost of its length times each candidate's.
    const size_t apart = word.size() > c.size() ? word.size() - c.size() : c.size() - word.size();
    if (apart >= best_distance) continue;
    const size_t d = edit_distance(lowered, lower(c));
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string KeySchema::suggest(const std::string& name, const std::string& only_section) const {
  const std::string section = name.substr(0, std::min(name.find('.'), name.size()));
  const std::string field = name.substr(name.find('.') + 1);
  std::vector<const KeySpec*> pool;
  for (const KeySpec& k : keys_)
    if (only_section.empty() || k.section() == only_section) pool.push_back(&k);
  // The right field in the wrong section ("[training] workers" → cluster.workers) is the likeliest slip.
  for (const KeySpec* k : pool)
    if (k->field() == field) return k->name;
  std::vector<std::string> names;
  for (const KeySpec* k : pool) names.push_back(k->name);
  if (std::string near = suggest_among(name, names); !near.empty()) return near;
  // A misspelt field, among its own section's: a field alike in a section the name did not mean (foo.bar →
  // transformer.base) is noise.
  std::vector<std::string> fields;
  for (const KeySpec* k : pool)
    if (k->section() == section) fields.push_back(k->field());
  const std::string near = suggest_among(field, fields);
  return near.empty() ? "" : section + "." + near;
}

}  // namespace dtsim::sim
