// Mixed precision: format names and the rounded working copy of the master weights.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/mixed_precision.hpp"

namespace dtsim::models {
namespace {

using gpu::NumberFormat;

TEST(MixedPrecision, ParsesNumberFormats) {
  EXPECT_EQ(parse_number_format("fp32"), NumberFormat::Fp32);
  EXPECT_EQ(parse_number_format("bf16"), NumberFormat::Bf16);
  EXPECT_EQ(parse_number_format("fp16"), NumberFormat::Fp16);
  EXPECT_THROW(parse_number_format("fp8"), std::invalid_argument);
  const PrecisionSettings defaults;
  EXPECT_EQ(defaults.weights, NumberFormat::Fp32);
  EXPECT_EQ(defaults.activations, NumberFormat::Fp32);
  EXPECT_EQ(defaults.gradients, NumberFormat::Fp32);
}

// bf16 keeps 7 mantissa bits: around 1 its spacing is 2^-7.
const std::vector<float> kMaster{1.0f + 0x1p-8f,      // halfway between 1 and 1 + 2^-7: ties to even → 1
                                 1.0f + 3 * 0x1p-8f,  // halfway between 1 + 2^-7 and 1 + 2^-6 → 1 + 2^-6
                                 1.0f + 0x1p-7f + 0x1p-10f,  // below halfway → 1 + 2^-7
                                 -3.14159265f, 1e-30f, 3.0e38f, 65520.0f};

TEST(MixedPrecision, WorkingCopyIsTheMasterRoundedToBf16) {
  gpu::CpuOps<float> ops;
  std::vector<float> working(kMaster.size(), -7.0f);
  const std::vector<float> master = kMaster;
  make_working_copy<float>(ops, master.data(), working.data(), master.size(), NumberFormat::Bf16);
  EXPECT_EQ(master, kMaster);  // the master weights are left alone
  EXPECT_EQ(working[0], 1.0f);
  EXPECT_EQ(working[1], 1.0f + 0x1p-6f);
  EXPECT_EQ(working[2], 1.0f + 0x1p-7f);
  EXPECT_EQ(working[3], -3.140625f);  // 1.1001001 × 2^1
  for (size_t i = 0; i < master.size(); ++i) EXPECT_EQ(working[i], gpu::round_to(master[i], NumberFormat::Bf16)) << i;
}

TEST(MixedPrecision, WorkingCopyInDoubleAndOtherFormats) {
  gpu::CpuOps<double> ops;
  std::vector<double> master(kMaster.begin(), kMaster.end()), working(master.size());
  make_working_copy<double>(ops, master.data(), working.data(), master.size(), NumberFormat::Bf16);
  for (size_t i = 0; i < master.size(); ++i)
    EXPECT_EQ(working[i], gpu::round_to(kMaster[i], NumberFormat::Bf16)) << i;
  make_working_copy<double>(ops, master.data(), working.data(), master.size(), NumberFormat::Fp16);
  EXPECT_EQ(working[6], INFINITY);  // 65520 rounds past fp16's largest finite value, 65504
  EXPECT_EQ(working[4], 0.0);       // 1e-30 is below half of fp16's smallest subnormal
  for (size_t i = 0; i < master.size(); ++i)
    EXPECT_EQ(working[i], gpu::round_to(kMaster[i], NumberFormat::Fp16)) << i;
  make_working_copy<double>(ops, master.data(), working.data(), master.size(), NumberFormat::Fp32);
  EXPECT_EQ(working, master);
}

}  // namespace
}  // namespace dtsim::models
