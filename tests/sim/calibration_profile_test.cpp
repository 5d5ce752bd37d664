// dtsim calibrate's fit, on hand-made measurements: the profile's rates are the ones the docs define (fastest
// product, largest product, fastest stream, empty call), the roofline it implies times a product by hand's
// arithmetic, and the .ini it writes states each value in units the scenario parser reads.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "models/workload/attention_time.hpp"
#include "sim/app/calibration_profile.hpp"

namespace {

using dtsim::sim::Calibration;
using dtsim::sim::CalibratedProfile;
using dtsim::sim::ProfileHeader;

// 100³ at 2 GFLOP/s, 150³ at 5 GFLOP/s (the fastest), 200³ at 4 GFLOP/s (the largest); streams at 10 GB/s (1,000
// floats, in cache) and 5 GB/s (a million, the largest).
Calibration hand_made() {
  Calibration c;
  c.products = {{100, 100, 100, 2e6 / 2e9}, {150, 150, 150, 6.75e6 / 5e9}, {200, 200, 200, 1.6e7 / 4e9}};
  c.streams = {{1000, 12000 / 1e10}, {1000000, 1.2e7 / 5e9}};
  c.empty_call_seconds = 2e-6;
  return c;
}

TEST(CalibrationProfile, PeakIsTheFastestProductEfficiencyTheLargestOverItBandwidthTheLargestStream) {
  const CalibratedProfile p = dtsim::sim::fit_profile(hand_made());
  EXPECT_DOUBLE_EQ(p.peak_flops, 5e9);
  EXPECT_DOUBLE_EQ(p.achievable_flops, 4e9);
  EXPECT_DOUBLE_EQ(p.efficiency, 0.8);
  EXPECT_DOUBLE_EQ(p.memory_bandwidth, 5e9);
  EXPECT_DOUBLE_EQ(p.launch_overhead, 2e-6);
}

TEST(CalibrationProfile, ProfileTimesAProductByTheRoofline) {
  const CalibratedProfile p = dtsim::sim::fit_profile(hand_made());
  // 200³: 1.6e7 FLOPs at 5e9 × 0.8 = 4 ms; its 3 × 40,000 floats (480 kB) at 5 GB/s = 96 us; plus 2 us.
  EXPECT_NEAR(dtsim::sim::profile_seconds(p, {200, 200, 200, 1.0}), 4e-3 + 2e-6, 1e-15);
  // A 1 × 1000 × 1000 product is memory-bound: 4 × (1,000 + 1,000,000 + 1,000) bytes at 5 GB/s = 801.6 us.
  EXPECT_NEAR(dtsim::sim::profile_seconds(p, {1, 1000, 1000, 1.0}), 8.016e-4 + 2e-6, 1e-15);
}

TEST(CalibrationProfile, IniStatesEachValueWithItsUnit) {
  ProfileHeader h;
  h.name = "test device";
  h.backend = "cpu";
  h.numerics = "x86-64-v3";
  h.command = "dtsim calibrate --out x";
  h.date = "2026-12-07T00:00:00Z";
  h.memory_bytes = 64e9;
  const std::string ini = dtsim::sim::profile_ini(dtsim::sim::fit_profile(hand_made()), h);
  for (const char* line : {"[gpu]\n", "name = test device\n", "peak_fp32 = 5GFLOPS\n", "peak_bf16 = 5GFLOPS\n",
                           "efficiency = 0.8\n", "achievable_fp32 = 4GFLOPS\n", "memory_bandwidth = 5GB/s\n",
                           "launch_overhead = 2us\n", "memory = 64GB\n"})
    EXPECT_NE(ini.find(line), std::string::npos) << line << "\n" << ini;
}

TEST(CalibrationProfile, CsvHasOneRowPerMeasurementWithTheProfileError) {
  const Calibration c = hand_made();
  const std::string csv = dtsim::sim::calibration_csv(c, dtsim::sim::fit_profile(c));
  size_t rows = 0;
  for (const char ch : csv) rows += ch == '\n';
  EXPECT_EQ(rows, 1u + 3 + 2 + 1);  // header, products, streams, the empty call
  // 100³ measured at 1 ms; the profile gives 2e6 / 4e9 = 0.5 ms + 2 us: -49.80 %.
  EXPECT_NE(csv.find("gemm,100,100,100,,2000000,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",-49.80\n"), std::string::npos) << csv;
}

TEST(CalibrationProfile, MissingOrNonPositiveMeasurementsAreRefused) {
  Calibration no_products = hand_made();
  no_products.products.clear();
  EXPECT_THROW(dtsim::sim::fit_profile(no_products), std::invalid_argument);
  Calibration no_streams = hand_made();
  no_streams.streams.clear();
  EXPECT_THROW(dtsim::sim::fit_profile(no_streams), std::invalid_argument);
  Calibration zero_time = hand_made();
  zero_time.products[0].seconds = 0;
  EXPECT_THROW(dtsim::sim::fit_profile(zero_time), std::invalid_argument);
  Calibration no_call = hand_made();
  no_call.empty_call_seconds = 0;
  EXPECT_THROW(dtsim::sim::fit_profile(no_call), std::invalid_argument);
}

// Two shapes of 2 sequences of 64 tokens, 4 heads of 32, one per mask: 4 · 2 · 64² · 4 · 32 = 4,194,304 forward
// FLOPs without the mask, half with it. Forward 1 ms and backward 2 ms (no mask), 0.8 and 1.5 ms (causal).
TEST(CalibrationProfile, TheAttentionTableGivesBackTheMeasuredRatesInBothDirections) {
  const std::vector<dtsim::sim::AttentionMeasurement> measured = {{2, 64, 4, 32, false, 1e-3, 2e-3},
                                                                   {2, 64, 4, 32, true, 0.8e-3, 1.5e-3}};
  EXPECT_DOUBLE_EQ(measured[0].forward_flops(), 4194304.0);
  EXPECT_DOUBLE_EQ(measured[1].forward_flops(), 2097152.0);
  ProfileHeader header;
  header.command = "dtsim calibrate";
  const std::string csv = dtsim::sim::attention_table_csv(measured, header);
  const dtsim::models::AttentionTable table = dtsim::models::parse_attention_table(csv);
  EXPECT_EQ(table.points(), 4u);
  // Forward: F / t. Backward: what forward + backward at 3.5 F / (t_f + t_b) leaves after the forward, which is
  // the measured 2.5 F / t_b (to the nine significant digits the table holds).
  const auto near = [](double got, double want) { EXPECT_NEAR(got / want, 1.0, 1e-7) << got << " against " << want; };
  near(table.forward_rate(32, 64, false), 4194304.0 / 1e-3);
  near(table.backward_rate(32, 64, false), 2.5 * 4194304.0 / 2e-3);
  near(table.forward_rate(32, 64, true), 2097152.0 / 0.8e-3);
  near(table.backward_rate(32, 64, true), 2.5 * 2097152.0 / 1.5e-3);
  // One mask alone makes no table, and a time that is not positive is refused.
  EXPECT_THROW(dtsim::sim::attention_table_csv({measured[0]}, header), std::invalid_argument);
  EXPECT_THROW(dtsim::sim::attention_table_csv({measured[0], {2, 64, 4, 32, true, 0, 1e-3}}, header),
               std::invalid_argument);
}

TEST(CalibrationProfile, AProfileWithAnAttentionTableNamesIt) {
  ProfileHeader header;
  header.name = "bench";
  header.attention_table = "attention.csv";
  const Calibration c = hand_made();
  EXPECT_NE(dtsim::sim::profile_ini(dtsim::sim::fit_profile(c), header).find("\nattention_table = attention.csv\n"),
            std::string::npos);
  header.attention_table.clear();
  EXPECT_EQ(dtsim::sim::profile_ini(dtsim::sim::fit_profile(c), header).find("attention_table"), std::string::npos);
}

}  // namespace
