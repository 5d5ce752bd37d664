// bf16 and fp16 rounding against exact IEEE 754 bit patterns.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gpu/cpu_ops.hpp"
#include "gpu/number_format.hpp"

namespace dtsim::gpu {
namespace {

float f(uint32_t bits) { return bits_float(bits); }

TEST(Fp16, ExactValuesAndLimits) {
  EXPECT_EQ(float_to_fp16_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_fp16_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_fp16_bits(1.0f), 0x3C00);
  EXPECT_EQ(float_to_fp16_bits(-2.0f), 0xC000);
  EXPECT_EQ(float_to_fp16_bits(0.5f), 0x3800);
  EXPECT_EQ(float_to_fp16_bits(65504.0f), 0x7BFF);                 // largest finite
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1.0f, -14)), 0x0400);    // smallest normal
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1.0f, -24)), 0x0001);    // smallest subnormal
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1023.0f, -24)), 0x03FF); // largest subnormal
}

TEST(Fp16, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even mantissa, 1.
  EXPECT_EQ(float_to_fp16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3·2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): up.
  EXPECT_EQ(float_to_fp16_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  // Just above a tie rounds up.
  EXPECT_EQ(float_to_fp16_bits(f(float_bits(1.0f + std::ldexp(1.0f, -11)) + 1)), 0x3C01);
}

TEST(Fp16, OverflowGoesToInfinity) {
  EXPECT_EQ(float_to_fp16_bits(65519.996f), 0x7BFF);  // below the halfway point 65520
  EXPECT_EQ(float_to_fp16_bits(65520.0f), 0x7C00);    // the tie goes to the even neighbour: infinity
  EXPECT_EQ(float_to_fp16_bits(1e6f), 0x7C00);
  EXPECT_EQ(float_to_fp16_bits(-1e6f), 0xFC00);
  EXPECT_EQ(float_to_fp16_bits(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(float_to_fp16_bits(-std::numeric_limits<float>::infinity()), 0xFC00);
}

TEST(Fp16, UnderflowIsGradual) {
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1.0f, -25)), 0x0000);          // half of the smallest subnormal: tie → 0
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1.5f, -25)), 0x0001);          // above the tie → smallest subnormal
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(3.0f, -25)), 0x0002);          // 1.5 units: tie → even 2
  EXPECT_EQ(float_to_fp16_bits(-std::ldexp(1.0f, -30)), 0x8000);         // → −0
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(2047.0f, -25)), 0x0400);       // rounds up into the normal range
  EXPECT_EQ(float_to_fp16_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
}

TEST(Fp16, NanStaysNan) {
  const uint16_t h = float_to_fp16_bits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(h & 0x7C00, 0x7C00);
  EXPECT_NE(h & 0x03FF, 0);
  EXPECT_TRUE(std::isnan(fp16_bits_to_float(h)));
  EXPECT_TRUE(std::isnan(round_to(f(0x7F800001), NumberFormat::Fp16)));  // signalling NaN input
}

TEST(Fp16, EveryHalfRoundTripsExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float x = fp16_bits_to_float(static_cast<uint16_t>(h));
    if (std::isnan(x)) {
      EXPECT_EQ(h & 0x7C00, 0x7C00u);
      continue;
    }
    EXPECT_EQ(float_to_fp16_bits(x), h) << std::hex << h;
  }
  EXPECT_EQ(fp16_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_bits_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_bits_to_float(0xFC00), -std::numeric_limits<float>::infinity());
}

TEST(Bf16, ExactValuesRoundingAndLimits) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16_bits(-0.0f), 0x8000);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1); 1 + 3·2^-8 ties up to 1 + 2^-6.
  EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(float_to_bf16_bits(f(0x3F808001)), 0x3F81);  // just above a tie
  // The largest float rounds to infinity; the largest bf16 (0x7F7F) stays.
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(float_to_bf16_bits(f(0x7F7F0000)), 0x7F7F);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(float_to_bf16_bits(-std::numeric_limits<float>::infinity()), 0xFF80);
  // Subnormals keep their top mantissa bits: 0x00018000 is a tie between 0x0001 and 0x0002 → even 0x0002.
  EXPECT_EQ(float_to_bf16_bits(f(0x00018000)), 0x0002);
  EXPECT_EQ(float_to_bf16_bits(f(0x00008000)), 0x0000);
  EXPECT_EQ(float_to_bf16_bits(f(0x00010000)), 0x0001);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(f(0x7F800001)))));
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(f(0xFFC00000)))));
}

TEST(Bf16, EveryBf16RoundTripsExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float x = bf16_bits_to_float(static_cast<uint16_t>(h));
    if (std::isnan(x)) continue;
    EXPECT_EQ(float_to_bf16_bits(x), h) << std::hex << h;
  }
}

TEST(RoundToFormat, BackendOpRoundsInPlace) {
  CpuOps<float> ops;
  std::vector<float> x{1.0f + std::ldexp(1.0f, -9), 70000.0f, std::ldexp(1.0f, -26), 0.1f};
  auto fp16 = x;
  ops.round_to_format(fp16.data(), fp16.size(), NumberFormat::Fp16);
  EXPECT_EQ(fp16[0], 1.0f + std::ldexp(1.0f, -9));  // representable in fp16 (10 mantissa bits)
  EXPECT_TRUE(std::isinf(fp16[1]));
  EXPECT_EQ(fp16[2], 0.0f);
  EXPECT_EQ(fp16[3], fp16_bits_to_float(0x2E66));  // 0.1 → 0.0999755859375
  auto bf16 = x;
  ops.round_to_format(bf16.data(), bf16.size(), NumberFormat::Bf16);
  EXPECT_EQ(bf16[0], 1.0f);
  EXPECT_EQ(bf16[1], 70144.0f);  // 70000 = 0x4788B800 → 0x4789 = 70144
  EXPECT_EQ(bf16[2], std::ldexp(1.0f, -26));
  auto same = x;
  ops.round_to_format(same.data(), same.size(), NumberFormat::Fp32);
  EXPECT_EQ(same, x);
  EXPECT_EQ(ops.count_nonfinite(fp16.data(), fp16.size()), 1u);
}

}  // namespace
}  // namespace dtsim::gpu
