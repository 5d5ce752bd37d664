// Fuzz target: quantities and values (sim/scenario/units.hpp parse_quantity, parse_byte_count,
// format_quantity, printable; keys.hpp's value checks) on arbitrary text. Bad input must be a ValueError
// whose reason and hint are safe to print; an accepted quantity must be finite and within its limit.
#include <cmath>

#include "sim/scenario/keys.hpp"
#include "sim/scenario/units.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace dtsim::sim;
using dtsim::fuzz::finding;

void check(const ValueError& e) {
  const auto unprintable_at = [](std::string_view m) { return find_unprintable(m); };
  dtsim::fuzz::check_message(e.what(), unprintable_at);
  dtsim::fuzz::check_message(e.hint(), unprintable_at);
}

// The schema's other value types, as the scenario parser checks them.
bool value_types_accept(const std::string& text) {
  bool any = false;
  for (const ValueType type : {ValueType::Int, ValueType::Real, ValueType::Bool, ValueType::IntList}) {
    KeySpec spec;
    spec.name = "fuzz.value";
    spec.type = type;
    try {
      validate_value(spec, text);
      any = true;
    } catch (const ValueError& e) {
      check(e);
    }
  }
  return any;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (find_unprintable(printable(text)) != std::string::npos) finding("printable() left a character to escape");
  bool accepted = false;
  for (const Dimension dim : {Dimension::Time, Dimension::Bandwidth, Dimension::FlopRate, Dimension::Bytes,
                              Dimension::Power}) {
    try {
      const double v = parse_quantity(text, dim);
      if (!std::isfinite(v) || std::fabs(v) > max_quantity(dim)) finding("parse_quantity returned " + std::to_string(v));
      if (format_quantity(v, dim).empty()) finding("format_quantity returned nothing");
      accepted = true;
    } catch (const ValueError& e) {
      check(e);
    }
  }
  try {
    const uint64_t bytes = parse_byte_count(text, 1, 1000000000000000ull);
    if (bytes < 1 || bytes > 1000000000000000ull) finding("parse_byte_count out of its bounds");
  } catch (const ValueError& e) {
    check(e);
  }
  // Only quantities decide the outcome; the other value types are fuzzed for crashes and messages.
  value_types_accept(text);
  dtsim::fuzz::last_outcome() = accepted ? dtsim::fuzz::Outcome::Accepted : dtsim::fuzz::Outcome::Refused;
  return 0;
}
