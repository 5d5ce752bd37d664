#include "sim/scenario/units.hpp"

#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>

#include "sim/scenario/text.hpp"

namespace dtsim::sim {
namespace {

struct Prefix {
  const char* symbol;
  double factor;
};
constexpr Prefix kDecimal[] = {{"", 1.0}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}};
constexpr Prefix kBinary[] = {{"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0}};

// Every accepted unit spelling of a dimension, with its factor to the base unit.
std::map<std::string, double> make_unit_table(Dimension dim) {
  std::map<std::string, double> t;
  switch (dim) {
    case Dimension::Time:
      t = {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6}, {"ns", 1e-9}, {"min", 60.0}, {"h", 3600.0}};
      break;
    case Dimension::Bandwidth:
      for (const Prefix& p : kDecimal) {
        const std::string s = p.symbol;
        for (const char* bits : {"bps", "b/s"}) t[s + bits] = p.factor / 8.0;
        for (const char* bytes : {"Bps", "B/s"}) t[s + bytes] = p.factor;
      }
      for (const Prefix& p : kBinary) {
        t[std::string(p.symbol) + "B/s"] = p.factor;
        t[std::string(p.symbol) + "Bps"] = p.factor;
      }
      break;
    case Dimension::FlopRate:
      for (const Prefix& p : kDecimal)
        for (const char* u : {"FLOPS", "flops", "FLOP/s", "flop/s"}) t[std::string(p.symbol) + u] = p.factor;
      break;
    case Dimension::Bytes:
      for (const Prefix& p : kDecimal) t[std::string(p.symbol) + "B"] = p.factor;
      for (const Prefix& p : kBinary) t[std::string(p.symbol) + "B"] = p.factor;
      break;
    case Dimension::Power:
      t = {{"W", 1.0}, {"kW", 1e3}};
      break;
  }
  return t;
}

// Built once per dimension, in the enum's order: parse_quantity runs for every quantity key of every scenario
// and profile.
const std::map<std::string, double>& unit_table(Dimension dim) {
  static const std::map<std::string, double> tables[] = {
      make_unit_table(Dimension::Time), make_unit_table(Dimension::Bandwidth), make_unit_table(Dimension::FlopRate),
      make_unit_table(Dimension::Bytes), make_unit_table(Dimension::Power)};
  return tables[static_cast<int>(dim)];
}

// The length of the valid UTF-8 sequence that starts at text[i] (1 for ASCII), or 0 when the byte there does
// not start one: a stray continuation byte, an overlong form, a surrogate, a code point above U+10FFFF or a
// sequence cut short.
size_t utf8_length_at(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

// A character printable() escapes: C0 controls (but a tab when allowed), DEL, and C1 controls U+0080-U+009F
// (two bytes C2 80..C2 9F, which some terminals obey like ESC [).
bool is_control(std::string_view text, size_t i, size_t length, bool allow_tab) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  if (length == 1) return (c < 0x20 && !(allow_tab && c == '\t')) || c == 0x7F;
  return length == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0;
}

// The largest magnitude accepted in each dimension, and the sentence that gives it in messages.
struct Limit {
  double max;
  const char* text;
};

Limit limit_of(Dimension dim) {
  switch (dim) {
    case Dimension::Time: return {1e9, "the largest time accepted is 1e9 s (about 31.7 years)"};
    case Dimension::Bandwidth: return {1e18, "the largest bandwidth accepted is 1e18 B/s (8 Eb/s)"};
    case Dimension::FlopRate: return {1e21, "the largest flop rate accepted is 1e21 FLOP/s"};
    case Dimension::Bytes:
      return {9007199254740992.0,  // 2^53
              "the largest size accepted is 2^53 B (about 9 PB, the largest whole number of bytes a double holds exactly)"};
    case Dimension::Power: return {1e9, "the largest power accepted is 1e9 W"};
  }
  return {0.0, ""};
}

// The length of the decimal number at the start of `s`: [+-]digits[.digits][(e|E)[+-]digits], with at least
// one digit before or after the point; 0 when there is none. An 'e' not followed by digits is left to the unit.
size_t decimal_prefix(const std::string& s) {
  const auto digits_from = [&](size_t i) {
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i;
  };
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const size_t int_end = digits_from(i);
  size_t end = int_end;
  bool any_digit = int_end > i;
  if (end < s.size() && s[end] == '.') {
    const size_t frac_end = digits_from(end + 1);
    any_digit = any_digit || frac_end > end + 1;
    end = frac_end;
  }
  if (!any_digit) return 0;
  if (end < s.size() && (s[end] == 'e' || s[end] == 'E')) {
    size_t e = end + 1;
    if (e < s.size() && (s[e] == '+' || s[e] == '-')) ++e;
    const size_t exp_end = digits_from(e);
    if (exp_end > e) end = exp_end;
  }
  return end;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char buf[8];
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8_length_at(text, i);
    if (length == 0 || is_control(text, i, length, false)) {
      if (length == 2) {  // a C1 control, shown as its code point
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
      } else {
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(text[i]));
      }
      out += buf;
      i += length == 2 ? 2 : 1;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

size_t find_unprintable(std::string_view text, bool allow_tab) {
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8_length_at(text, i);
    if (length == 0 || is_control(text, i, length, allow_tab)) return i;
    i += length;
  }
  return std::string_view::npos;
}

double max_quantity(Dimension dim) { return limit_of(dim).max; }

std::string base_unit(Dimension dim) {
  switch (dim) {
    case Dimension::Time: return "s";
    case Dimension::Bandwidth: return "B/s";
    case Dimension::FlopRate: return "FLOP/s";
    case Dimension::Bytes: return "B";
    case Dimension::Power: return "W";
  }
  return "";
}

std::string example_units(Dimension dim) {
  switch (dim) {
    case Dimension::Time: return "h, min, s, ms, us (or µs), ns (e.g. 1.3us)";
    case Dimension::Bandwidth: return "Gbps, Gb/s (bits) or GB/s, GBps, GiB/s (bytes) (e.g. 200Gbps, 25GB/s)";
    case Dimension::FlopRate: return "TFLOPS, GFLOPS, FLOP/s (e.g. 312TFLOPS)";
    case Dimension::Bytes: return "B, kB, MB, GB, KiB, MiB, GiB (e.g. 25MB)";
    case Dimension::Power: return "W, kW (e.g. 400W)";
  }
  return "";
}

bool is_quantity(std::string_view text, Dimension dim) {
  try {
    parse_quantity(text, dim);
    return true;
  } catch (const ValueError&) {
    return false;
  }
}

namespace {

// parse_quantity with the largest magnitude `max` that `max_text` states ("the largest ... accepted is ...").
double parse_quantity_within(std::string_view text, Dimension dim, double max, const std::string& max_text) {
  const std::string s = trim(text);
  if (s.empty()) throw ValueError("empty value", "write a number with a unit: " + example_units(dim));
  const size_t number_length = decimal_prefix(s);
  if (number_length == 0) {
    const std::string word = lower(s.substr(s[0] == '+' || s[0] == '-' ? 1 : 0, 3));
    if (word == "inf" || word == "nan")
      throw ValueError("'" + s + "' is not a finite number", "write a number with a unit, e.g. " + example_units(dim));
    throw ValueError("'" + s + "' does not start with a number", "write e.g. " + example_units(dim));
  }
  const std::string number_text = s.substr(0, number_length);
  errno = 0;
  const double number = std::strtod(number_text.c_str(), nullptr);
  const bool out_of_double_range = errno == ERANGE;
  const std::string unit = trim(std::string_view(s).substr(number_length));
  if (unit.empty())
    throw ValueError("'" + s + "' has no unit", "units are required; accepted: " + example_units(dim));
  const auto& table = unit_table(dim);
  const auto it = table.find(unit);
  if (it == table.end())
    throw ValueError("unknown unit '" + unit + "' for a " + base_unit(dim) + " quantity",
                     "accepted: " + example_units(dim));
  const double value = number * it->second;
  // strtod sets ERANGE both for overflow (±HUGE_VAL) and for a nonzero number that underflows.
  if (!std::isfinite(value) || std::fabs(value) > max || (out_of_double_range && std::fabs(number) >= 1.0))
    throw ValueError("'" + s + "' is too " + (value < 0 || number < 0 ? "far below zero" : "large") + "; " + max_text,
                     "check the number and its unit");
  if ((out_of_double_range && std::fabs(number) < 1.0) || (value != 0.0 && std::fabs(value) < DBL_MIN))
    throw ValueError("'" + s + "' is too close to zero to be represented", "write 0" + unit + " or a larger value");
  return value;
}

}  // namespace

double parse_quantity(std::string_view text, Dimension dim) {
  const Limit limit = limit_of(dim);
  return parse_quantity_within(text, dim, limit.max, limit.text);
}

uint64_t parse_byte_count(std::string_view text, uint64_t min_bytes, uint64_t max_bytes) {
  // One largest size in every message, the caller's when it is below what a double holds exactly (--sizes 9PB
  // and 1e30B were refused with two different largest sizes).
  const double most = std::min(static_cast<double>(max_bytes), limit_of(Dimension::Bytes).max);
  const double v = parse_quantity_within(
      text, Dimension::Bytes, most,
      most < limit_of(Dimension::Bytes).max
          ? "the largest size accepted is " + format_quantity(most, Dimension::Bytes) + " (" + std::to_string(max_bytes) + " B)"
          : limit_of(Dimension::Bytes).text);
  const std::string s = trim(text);
  if (v < static_cast<double>(min_bytes))
    throw ValueError("'" + s + "' is below the minimum of " + std::to_string(min_bytes) + " B", "");
  if (std::floor(v) != v) throw ValueError("'" + s + "' is not a whole number of bytes", "write e.g. 1536B for 1.5KiB");
  return static_cast<uint64_t>(v);
}

std::string format_quantity(double value, Dimension dim) {
  struct Scale {
    double factor;
    const char* unit;
  };
  static const Scale kTime[] = {{1.0, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
  static const Scale kBandwidth[] = {{1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "kB/s"}, {1.0, "B/s"}};
  static const Scale kFlops[] = {{1e15, "PFLOPS"}, {1e12, "TFLOPS"}, {1e9, "GFLOPS"}, {1e6, "MFLOPS"}, {1.0, "FLOPS"}};
  static const Scale kBytes[] = {{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}, {1.0, "B"}};
  static const Scale kPower[] = {{1e3, "kW"}, {1.0, "W"}};
  const Scale* first = kTime;
  size_t count = std::size(kTime);
  switch (dim) {
    case Dimension::Time: break;
    case Dimension::Bandwidth: first = kBandwidth; count = std::size(kBandwidth); break;
    case Dimension::FlopRate: first = kFlops; count = std::size(kFlops); break;
    case Dimension::Bytes: first = kBytes; count = std::size(kBytes); break;
    case Dimension::Power: first = kPower; count = std::size(kPower); break;
  }
  // The largest unit the value reaches; zero is shown in the base unit.
  const Scale* pick = first + count - 1;
  for (size_t i = 0; value == 0.0 && i < count; ++i)
    if (first[i].factor == 1.0) pick = first + i;
  for (size_t i = 0; value != 0.0 && i < count; ++i) {
    if (std::fabs(value) >= first[i].factor) {
      pick = first + i;
      break;
    }
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g %s", value / pick->factor, pick->unit);
  return buf;
}

}  // namespace dtsim::sim
