#include <gtest/gtest.h>

#include "sim/scenario/units.hpp"

namespace dtsim::sim {
namespace {

TEST(Units, BandwidthInBitsAndBytes) {
  EXPECT_DOUBLE_EQ(parse_quantity("200Gbps", Dimension::Bandwidth), 25e9);
  EXPECT_DOUBLE_EQ(parse_quantity("200 Gb/s", Dimension::Bandwidth), 25e9);
  EXPECT_DOUBLE_EQ(parse_quantity("25GB/s", Dimension::Bandwidth), 25e9);
  EXPECT_DOUBLE_EQ(parse_quantity("25GBps", Dimension::Bandwidth), 25e9);
  EXPECT_DOUBLE_EQ(parse_quantity("10Gbps", Dimension::Bandwidth), 1.25e9);
  EXPECT_DOUBLE_EQ(parse_quantity("1GiB/s", Dimension::Bandwidth), 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_quantity("800bps", Dimension::Bandwidth), 100.0);
}

TEST(Units, TimeFlopsSizesPower) {
  EXPECT_DOUBLE_EQ(parse_quantity("1.3us", Dimension::Time), 1.3e-6);
  EXPECT_DOUBLE_EQ(parse_quantity("1.3\xC2\xB5s", Dimension::Time), 1.3e-6);
  EXPECT_DOUBLE_EQ(parse_quantity("130ns", Dimension::Time), 130e-9);
  EXPECT_DOUBLE_EQ(parse_quantity("2 ms", Dimension::Time), 2e-3);
  EXPECT_DOUBLE_EQ(parse_quantity("1e3s", Dimension::Time), 1000.0);
  EXPECT_DOUBLE_EQ(parse_quantity("312TFLOPS", Dimension::FlopRate), 312e12);
  EXPECT_DOUBLE_EQ(parse_quantity("19.5 TFLOP/s", Dimension::FlopRate), 19.5e12);
  EXPECT_DOUBLE_EQ(parse_quantity("25MB", Dimension::Bytes), 25e6);
  EXPECT_DOUBLE_EQ(parse_quantity("4MiB", Dimension::Bytes), 4194304.0);
  EXPECT_DOUBLE_EQ(parse_quantity("400W", Dimension::Power), 400.0);
}

TEST(Units, ErrorsExplainThemselves) {
  try {
    parse_quantity("200", Dimension::Bandwidth);
    FAIL() << "a bare number must be rejected";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("no unit"), std::string::npos);
    EXPECT_NE(e.hint().find("Gbps"), std::string::npos);
  }
  EXPECT_THROW(parse_quantity("200Gbs", Dimension::Bandwidth), ValueError);
  EXPECT_THROW(parse_quantity("fast", Dimension::Bandwidth), ValueError);
  EXPECT_THROW(parse_quantity("", Dimension::Time), ValueError);
  EXPECT_THROW(parse_quantity("1.3", Dimension::Time), ValueError);
  EXPECT_THROW(parse_quantity("5GB", Dimension::Time), ValueError);  // a size is not a time
  EXPECT_THROW(parse_quantity("infus", Dimension::Time), ValueError);
}

TEST(Units, FormatPicksAReadableScale) {
  EXPECT_EQ(format_quantity(25e9, Dimension::Bandwidth), "25 GB/s");
  EXPECT_EQ(format_quantity(1.3e-6, Dimension::Time), "1.3 us");
  EXPECT_EQ(format_quantity(0.0, Dimension::Time), "0 s");
  EXPECT_EQ(format_quantity(0.0, Dimension::Bytes), "0 B");
  EXPECT_EQ(format_quantity(312e12, Dimension::FlopRate), "312 TFLOPS");
  EXPECT_EQ(format_quantity(15.41e9, Dimension::Bytes), "15.41 GB");
}

}  // namespace
}  // namespace dtsim::sim
