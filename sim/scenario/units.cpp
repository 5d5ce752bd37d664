#include "sim/scenario/units.hpp"

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
std::map<std::string, double> unit_table(Dimension dim) {
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

}  // namespace

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
    case Dimension::Time: return "s, ms, us, ns (e.g. 1.3us)";
    case Dimension::Bandwidth: return "Gbps, Gb/s (bits) or GB/s, GBps, GiB/s (bytes) (e.g. 200Gbps, 25GB/s)";
    case Dimension::FlopRate: return "TFLOPS, GFLOPS, FLOP/s (e.g. 312TFLOPS)";
    case Dimension::Bytes: return "B, kB, MB, GB, KiB, MiB, GiB (e.g. 25MB)";
    case Dimension::Power: return "W, kW (e.g. 400W)";
  }
  return "";
}

double parse_quantity(std::string_view text, Dimension dim) {
  const std::string s = trim(text);
  if (s.empty()) throw ValueError("empty value", "write a number with a unit: " + example_units(dim));
  const char* begin = s.c_str();
  char* end = nullptr;
  const double number = std::strtod(begin, &end);
  if (end == begin) throw ValueError("'" + s + "' does not start with a number", "write e.g. " + example_units(dim));
  if (!std::isfinite(number)) throw ValueError("'" + s + "' is not a finite number", "");
  const std::string unit = trim(std::string_view(end));
  if (unit.empty())
    throw ValueError("'" + s + "' has no unit", "units are required; accepted: " + example_units(dim));
  const auto table = unit_table(dim);
  const auto it = table.find(unit);
  if (it == table.end())
    throw ValueError("unknown unit '" + unit + "' for a " + base_unit(dim) + " quantity",
                    "accepted: " + example_units(dim));
  return number * it->second;
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
