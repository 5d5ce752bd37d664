// Physical quantities in scenario and profile files: a number followed by a unit, e.g. 200Gbps, 25GB/s,
// 1.3us, 312TFLOPS, 25MB. Values are converted to SI base units: seconds, bytes/s, FLOP/s, bytes, watts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dtsim::sim {

enum class Dimension { Time, Bandwidth, FlopRate, Bytes, Power };

// `text` made safe to print on a terminal: control characters (C0, DEL and the C1 range) and bytes that are
// not part of valid UTF-8 are written as \xNN (\u0080-\u009f for C1), so that a value quoted in a message
// can never move the cursor, change colours or hide part of the line. Valid UTF-8 (µs, ×) is kept.
std::string printable(std::string_view text);

// The byte offset of the first character printable() would escape (tabs count as fine when
// `allow_tab`), or std::string_view::npos when there is none.
size_t find_unprintable(std::string_view text, bool allow_tab = false);

// Thrown for a malformed value: what() is the reason ("unknown unit 'Gbs'") and hint() a possible fix.
// Both are passed through printable(), so that a quoted value never reaches the terminal raw.
class ValueError : public std::runtime_error {
 public:
  ValueError(const std::string& reason, const std::string& hint)
      : std::runtime_error(printable(reason)), hint_(printable(hint)) {}
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

// Parses "<number><unit>" (spaces between them allowed). A bare number is rejected: units are required, so
// that "200" can never silently mean bits where bytes were meant. The number is decimal ([+-]digits[.digits]
// [e[+-]digits]); inf, nan and hexadecimal are refused, and so is a result whose magnitude exceeds
// max_quantity(dim) or that is too close to zero for a double, so a parsed value is always finite.
double parse_quantity(std::string_view text, Dimension dim);
// Whether `text` alone is a quantity of `dim` ("10s", not "10" or "10s upp"): where words follow a time, whether
// the first is a whole time tells a misspelt keyword after it from a unit written apart ("10 s").
bool is_quantity(std::string_view text, Dimension dim);

// The largest magnitude parse_quantity accepts, in the base unit: 2^53 B for sizes (the largest whole number
// of bytes a double holds exactly), 1e9 s for times, 1e18 B/s, 1e21 FLOP/s and 1e9 W.
double max_quantity(Dimension dim);

// A size as a whole number of bytes in [min_bytes, max_bytes] (e.g. for --sizes 8B:1GiB); each way out
// (not a size, below the minimum, above the maximum, a fraction of a byte) is a ValueError saying which.
uint64_t parse_byte_count(std::string_view text, uint64_t min_bytes, uint64_t max_bytes);

// Short human form, e.g. 2.5e10 B/s → "25 GB/s", 1.3e-6 s → "1.3 us".
std::string format_quantity(double value, Dimension dim);

// The base unit a dimension is stored in ("s", "B/s", "FLOP/s", "B", "W") and a few accepted spellings.
std::string base_unit(Dimension dim);
std::string example_units(Dimension dim);

}  // namespace dtsim::sim
