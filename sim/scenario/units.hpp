// Physical quantities in scenario and profile files: a number followed by a unit, e.g. 200Gbps, 25GB/s,
// 1.3us, 312TFLOPS, 25MB. Values are converted to SI base units: seconds, bytes/s, FLOP/s, bytes, watts.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dtsim::sim {

enum class Dimension { Time, Bandwidth, FlopRate, Bytes, Power };

// Thrown for a malformed value: what() is the reason ("unknown unit 'Gbs'") and hint() a possible fix.
class ValueError : public std::runtime_error {
 public:
  ValueError(const std::string& reason, std::string hint) : std::runtime_error(reason), hint_(std::move(hint)) {}
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

// Parses "<number><unit>" (spaces between them allowed). A bare number is rejected: units are required, so
// that "200" can never silently mean bits where bytes were meant.
double parse_quantity(std::string_view text, Dimension dim);

// Short human form, e.g. 2.5e10 B/s → "25 GB/s", 1.3e-6 s → "1.3 us".
std::string format_quantity(double value, Dimension dim);

// The base unit a dimension is stored in ("s", "B/s", "FLOP/s", "B", "W") and a few accepted spellings.
std::string base_unit(Dimension dim);
std::string example_units(Dimension dim);

}  // namespace dtsim::sim
