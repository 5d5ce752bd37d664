// Quantities at the edges (issue 11): absurd magnitudes, inf and nan, numbers too small for a double, and
// byte counts. Each is refused with its real reason, and a parsed value is always finite.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "sim/scenario/errors.hpp"
#include "sim/scenario/keys.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/units.hpp"

namespace dtsim::sim {
namespace {

// The reason parse_quantity gives for `text`, or "" when it accepts it.
std::string reason_of(const std::string& text, Dimension dim) {
  try {
    const double v = parse_quantity(text, dim);
    EXPECT_TRUE(std::isfinite(v)) << text;
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

std::string byte_count_reason(const std::string& text, uint64_t lo, uint64_t hi) {
  try {
    parse_byte_count(text, lo, hi);
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

const char* const kSizeLimit =
    "the largest size accepted is 2^53 B (about 9 PB, the largest whole number of bytes a double holds exactly)";

TEST(UnitsLimits, HugeSizesSayTheyAreTooLargeAndGiveTheLimit) {
  EXPECT_EQ(reason_of("1e30B", Dimension::Bytes), std::string("'1e30B' is too large; ") + kSizeLimit);
  EXPECT_EQ(reason_of("9.1PB", Dimension::Bytes), std::string("'9.1PB' is too large; ") + kSizeLimit);
  EXPECT_EQ(reason_of("-1e30B", Dimension::Bytes), std::string("'-1e30B' is too far below zero; ") + kSizeLimit);
  EXPECT_DOUBLE_EQ(parse_quantity("9007199254740992B", Dimension::Bytes), 9007199254740992.0);
  EXPECT_DOUBLE_EQ(parse_quantity("8TiB", Dimension::Bytes), 8.0 * 1099511627776.0);
}

TEST(UnitsLimits, ZeroBytesIsAValidQuantity) {
  // Whether zero makes sense is the caller's business (a range, or parse_byte_count's minimum).
  EXPECT_EQ(parse_quantity("0B", Dimension::Bytes), 0.0);
  EXPECT_EQ(byte_count_reason("0B", 1, 1000000000000000), "'0B' is below the minimum of 1 B");
}

TEST(UnitsLimits, NumbersBeyondDoubleNeverOverflow) {
  // 1e308 is a finite double; times 1e12 it is not. 1e400 is not a double at all.
  EXPECT_EQ(reason_of("1e308TB", Dimension::Bytes), std::string("'1e308TB' is too large; ") + kSizeLimit);
  EXPECT_EQ(reason_of("1e308 s", Dimension::Time),
            "'1e308 s' is too large; the largest time accepted is 1e9 s (about 31.7 years)");
  EXPECT_EQ(reason_of("1e400Gbps", Dimension::Bandwidth),
            "'1e400Gbps' is too large; the largest bandwidth accepted is 1e18 B/s (8 Eb/s)");
  EXPECT_EQ(reason_of("2e21 FLOPS", Dimension::FlopRate),
            "'2e21 FLOPS' is too large; the largest flop rate accepted is 1e21 FLOP/s");
  EXPECT_EQ(reason_of("2GW", Dimension::Power), "unknown unit 'GW' for a W quantity");
  EXPECT_EQ(reason_of("2000000kW", Dimension::Power), "'2000000kW' is too large; the largest power accepted is 1e9 W");
  EXPECT_EQ(reason_of("1e9s", Dimension::Time), "");
}

TEST(UnitsLimits, NumbersTooCloseToZeroAreRefused) {
  EXPECT_EQ(reason_of("1e-400s", Dimension::Time), "'1e-400s' is too close to zero to be represented");
  EXPECT_EQ(reason_of("1e-300ns", Dimension::Time), "'1e-300ns' is too close to zero to be represented");
  EXPECT_EQ(parse_quantity("0e-400s", Dimension::Time), 0.0);
  EXPECT_DOUBLE_EQ(parse_quantity("1e-12s", Dimension::Time), 1e-12);
}

TEST(UnitsLimits, InfNanAndHexAreNotNumbers) {
  for (const char* text : {"inf B", "infB", "-inf s", "INFINITY GB", "nan B", "NaNs", "+nanGbps"})
    EXPECT_EQ(reason_of(text, Dimension::Bytes), std::string("'") + text + "' is not a finite number") << text;
  // strtod reads hexadecimal; the parser reads decimal only, so 0x10 is the number 0 and the unit 'x10GB'.
  EXPECT_EQ(reason_of("0x10GB", Dimension::Bytes), "unknown unit 'x10GB' for a B quantity");
  EXPECT_EQ(reason_of(".GB", Dimension::Bytes), "'.GB' does not start with a number");
  EXPECT_EQ(reason_of("1.5e GB", Dimension::Bytes), "unknown unit 'e GB' for a B quantity");
  EXPECT_DOUBLE_EQ(parse_quantity(".5ms", Dimension::Time), 5e-4);
  EXPECT_DOUBLE_EQ(parse_quantity("+2.e3 us", Dimension::Time), 2e-3);
}

TEST(UnitsLimits, ByteCountsGiveEachReason) {
  EXPECT_EQ(parse_byte_count("8B", 1, 1000), 8u);
  EXPECT_EQ(parse_byte_count("1GiB", 1, 1000000000000000), 1073741824u);
  EXPECT_EQ(byte_count_reason("1.5B", 1, 1000), "'1.5B' is not a whole number of bytes");
  // One largest size, the caller's, for a size past it and for one past any byte count (until issue 57 the
  // second gave 2^53 B, about 9 PB, and the first 1000 TB).
  EXPECT_EQ(byte_count_reason("2PB", 1, 1000000000000000),
            "'2PB' is too large; the largest size accepted is 1000 TB (1000000000000000 B)");
  EXPECT_EQ(byte_count_reason("1e30B", 1, 1000000000000000),
            "'1e30B' is too large; the largest size accepted is 1000 TB (1000000000000000 B)");
  EXPECT_EQ(byte_count_reason("-8B", 1, 1000), "'-8B' is below the minimum of 1 B");
  EXPECT_EQ(byte_count_reason("1e30B", 1, 1000), "'1e30B' is too large; the largest size accepted is 1 kB (1000 B)");
  EXPECT_EQ(byte_count_reason("1e30B", 1, UINT64_MAX), std::string("'1e30B' is too large; ") + kSizeLimit);
  EXPECT_EQ(byte_count_reason("8", 1, 1000), "'8' has no unit");
}

TEST(UnitsLimits, AnInfiniteSizeNoLongerPassesAnOpenEndedRange) {
  // gpu.memory is "positive()" with no upper bound: 1e308TB used to parse to inf and pass.
  KeySpec memory;
  memory.name = "gpu.memory";
  memory.type = ValueType::Quantity;
  memory.dim = Dimension::Bytes;
  memory.range.lo = 0;
  memory.range.lo_open = true;
  KeySpec profile;
  profile.name = "gpu.profile";
  profile.optional = true;
  KeySpec fabric = profile;
  fabric.name = "fabric.profile";
  const KeySchema schema({memory, profile, fabric});
  std::string msg;
  try {
    Scenario::parse(schema, "s.ini", "[gpu]\nmemory = 1e308TB\n", {}, "");
  } catch (const InputError& e) {
    msg = e.what();
  }
  EXPECT_EQ(msg, std::string("s.ini:2: gpu.memory: '1e308TB' is too large; ") + kSizeLimit +
                     "; check the number and its unit");
}

// Plain numbers are decimal: strtod's hexadecimal forms ("0x10" read as 16 workers) are refused, scientific
// notation is kept.
TEST(PlainNumbers, OnlyDecimalNotation) {
  EXPECT_THROW(parse_int("0x10"), ValueError);
  EXPECT_THROW(parse_real("0x1p-4"), ValueError);
  EXPECT_THROW(parse_real("0X.8"), ValueError);
  EXPECT_EQ(parse_int("1e3"), 1000);
  EXPECT_EQ(parse_int("-12"), -12);
  EXPECT_DOUBLE_EQ(parse_real("2.5E-3"), 0.0025);
  EXPECT_DOUBLE_EQ(parse_real("+.5"), 0.5);
}

}  // namespace
}  // namespace dtsim::sim
