// Block-wise weight quantization (int8 absmax, QLoRA's NF4): the codebook against its construction, nearest-level
// rounding by brute force, exact block maxima, storage against closed forms and the error on Gaussian weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/quantization.hpp"
#include "models/random.hpp"

namespace dtsim::models {
namespace {

constexpr int kLevels = 16;

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// The test's own reading of the documented layouts, so that the layouts themselves are checked.
int nf4_code_at(const QuantizedTensor& q, size_t i) { return i % 2 == 0 ? q.codes[i / 2] >> 4 : q.codes[i / 2] & 0xF; }
int int8_code_at(const QuantizedTensor& q, size_t i) { return static_cast<int8_t>(q.codes[i]); }

// Each block's absmax, computed here rather than read from the tensor.
std::vector<float> block_absmax(const std::vector<float>& x, int block) {
  std::vector<float> s(ceil_div(x.size(), static_cast<size_t>(block)), 0.0f);
  for (size_t i = 0; i < x.size(); ++i) s[i / block] = std::max(s[i / block], std::fabs(x[i]));
  return s;
}

std::vector<float> gaussian(size_t n, uint64_t seed, double sd = 1.0) {
  Rng rng(seed, "quantization-test");
  std::vector<float> x(n);
  for (float& v : x) v = static_cast<float>(sd * rng.normal());
  return x;
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// Φ⁻¹(p) by bisection: slow but obviously right, for checking the codebook's construction.
double normal_quantile(double p) {
  double lo = -10.0, hi = 10.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (normal_cdf(mid) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

TEST(WeightFormat, ParsesAndNamesEveryFormat) {
  for (const WeightFormat f : {WeightFormat::Fp32, WeightFormat::Int8, WeightFormat::Nf4})
    EXPECT_EQ(parse_weight_format(to_string(f)), f);
  EXPECT_EQ(parse_weight_format("fp32"), WeightFormat::Fp32);
  EXPECT_EQ(parse_weight_format("int8"), WeightFormat::Int8);
  EXPECT_EQ(parse_weight_format("nf4"), WeightFormat::Nf4);
  EXPECT_EQ(weight_format_names(), (std::vector<std::string>{"fp32", "int8", "nf4"}));
}

TEST(WeightFormat, ParseErrorNamesTheTextAndTheAcceptedValues) {
  for (const std::string bad : {"fp4", "NF4", "", "int4"}) {
    try {
      parse_weight_format(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("'" + bad + "'"), std::string::npos) << message;
      EXPECT_NE(message.find("fp32, int8, nf4"), std::string::npos) << message;
    }
  }
}

TEST(Nf4Codebook, IsSortedWithOneZeroEightPositiveAndSevenNegativeLevels) {
  ASSERT_EQ(kNf4Codebook.size(), static_cast<size_t>(kLevels));
  EXPECT_EQ(kNf4Codebook.front(), -1.0f);
  EXPECT_EQ(kNf4Codebook.back(), 1.0f);
  for (int k = 1; k < kLevels; ++k) EXPECT_LT(kNf4Codebook[k - 1], kNf4Codebook[k]) << k;
  EXPECT_EQ(std::count(kNf4Codebook.begin(), kNf4Codebook.end(), 0.0f), 1);
  EXPECT_EQ(std::count_if(kNf4Codebook.begin(), kNf4Codebook.end(), [](float c) { return c > 0; }), 8);
  EXPECT_EQ(std::count_if(kNf4Codebook.begin(), kNf4Codebook.end(), [](float c) { return c < 0; }), 7);
}

// QLoRA's construction (bitsandbytes create_normal_map, offset δ = 0.9677083): the 8 positive levels are
// Φ⁻¹ at 8 equally spaced probabilities from δ down to (not including) 1/2, the 7 negative ones −Φ⁻¹ at 7 such
// probabilities, all divided by Φ⁻¹(δ). Checking the constants against it catches a mistyped digit.
TEST(Nf4Codebook, MatchesTheNormalQuantileConstruction) {
  const double delta = 0.9677083;
  const double z_max = normal_quantile(delta);
  for (int j = 0; j < 8; ++j) {  // positive levels, largest first
    const double p = delta - j * (delta - 0.5) / 8;
    EXPECT_NEAR(kNf4Codebook[kLevels - 1 - j], normal_quantile(p) / z_max, 1e-6) << j;
  }
  for (int j = 0; j < 7; ++j) {  // negative levels, most negative first
    const double p = delta - j * (delta - 0.5) / 7;
    EXPECT_NEAR(kNf4Codebook[j], -normal_quantile(p) / z_max, 1e-6) << j;
  }
}

// Scales of several magnitudes, including one whose products with the levels are subnormal.
const std::vector<float> kScales{1.0f, 0.37f, 3.0e-3f, 1.0e30f, 2.5e-38f};

TEST(Nf4, EveryLevelTimesTheScaleRoundTripsExactly) {
  for (const float scale : kScales) {
    std::vector<float> x(kLevels);  // contains ±scale, so the block's absmax is scale
    for (int k = 0; k < kLevels; ++k) x[k] = kNf4Codebook[k] * scale;
    const QuantizedTensor q = quantize(x.data(), x.size(), WeightFormat::Nf4);
    ASSERT_EQ(q.scales, std::vector<float>{scale});
    for (int k = 0; k < kLevels; ++k) EXPECT_EQ(nf4_code_at(q, k), k) << scale;
    EXPECT_EQ(quantize_roundtrip(x.data(), x.size(), WeightFormat::Nf4), x) << scale;
  }
}

TEST(Int8, EveryCodeTimesTheScaleRoundTripsExactly) {
  const int codes = 2 * kInt8MaxCode + 1;
  for (const float scale : kScales) {
    std::vector<float> x(codes);
    for (int k = -kInt8MaxCode; k <= kInt8MaxCode; ++k)
      x[k + kInt8MaxCode] = static_cast<float>(k * static_cast<double>(scale) / kInt8MaxCode);
    const QuantizedTensor q = quantize(x.data(), x.size(), WeightFormat::Int8, codes);
    ASSERT_EQ(q.scales, std::vector<float>{scale});
    for (int k = -kInt8MaxCode; k <= kInt8MaxCode; ++k)
      EXPECT_EQ(int8_code_at(q, k + kInt8MaxCode), k) << scale;
    EXPECT_EQ(quantize_roundtrip(x.data(), x.size(), WeightFormat::Int8, codes), x) << scale;
  }
}

// Gaussian weights with outliers and a shorter last block, in two block sizes.
struct Case {
  std::vector<float> x;
  int block;
};

std::vector<Case> cases() {
  std::vector<float> x = gaussian(1000, 1, 0.02);
  x[10] = 0.5f;   // an outlier: only its own block loses precision
  x[700] = -3.0f;
  std::vector<float> uniform(333);
  Rng rng(2, "quantization-test-uniform");
  for (float& v : uniform) v = static_cast<float>(rng.uniform(-4.0, 4.0));
  return {{x, 64}, {x, 37}, {uniform, 64}, {uniform, 1}, {gaussian(130, 3), 128}};
}

// Quantises a case and dequantises it back; every block's scale must be the block's absolute maximum.
struct RoundTrip {
  QuantizedTensor q;
  std::vector<float> out;    // the dequantised values
  std::vector<float> scale;  // per block
};

RoundTrip round_trip(const Case& c, WeightFormat format) {
  RoundTrip r{quantize(c.x.data(), c.x.size(), format, c.block), std::vector<float>(c.x.size()),
              block_absmax(c.x, c.block)};
  dequantize(r.q, r.out.data());
  EXPECT_EQ(r.q.scales, r.scale);
  return r;
}

TEST(Nf4, EachValueIsTheNearestLevelTimesItsBlockScale) {
  for (const Case& c : cases()) {
    const auto [q, out, scale] = round_trip(c, WeightFormat::Nf4);
    for (size_t i = 0; i < c.x.size(); ++i) {
      const double s = scale[i / c.block], x = c.x[i];
      ASSERT_EQ(out[i], kNf4Codebook[nf4_code_at(q, i)] * scale[i / c.block]) << i;
      // Brute force over the 16 levels: none is nearer to x than the value chosen. The slack covers rounding
      // the products to float.
      const double error = std::fabs(x - out[i]), slack = 1e-6 * s;
      for (int k = 0; k < kLevels; ++k)
        EXPECT_LE(error, std::fabs(x - kNf4Codebook[k] * s) + slack) << "value " << i << " level " << k;
      // Hence the error is at most half the gap between the two levels around x / s.
      const auto above = std::lower_bound(kNf4Codebook.begin(), kNf4Codebook.end(), x / s);
      ASSERT_NE(above, kNf4Codebook.end()) << i;
      const double gap = above == kNf4Codebook.begin() ? 0.0 : *above - *(above - 1);
      EXPECT_LE(error, gap / 2 * s + slack) << i;
    }
  }
}

TEST(Int8, ErrorIsAtMostHalfAStep) {
  for (const Case& c : cases()) {
    const auto [q, out, scale] = round_trip(c, WeightFormat::Int8);
    for (size_t i = 0; i < c.x.size(); ++i) {
      const double s = scale[i / c.block], x = c.x[i];
      const int code = int8_code_at(q, i);
      ASSERT_GE(code, -kInt8MaxCode);
      ASSERT_LE(code, kInt8MaxCode);
      EXPECT_LE(std::fabs(x / s * kInt8MaxCode - code), 0.5 + 1e-9) << i;  // the nearest code
      // Half a step, scale/254, plus rounding the value to float.
      EXPECT_LE(std::fabs(x - out[i]), s / (2 * kInt8MaxCode) + std::fabs(out[i]) * 0x1p-23) << i;
    }
  }
}

TEST(Quantize, BlockMaximaAreReproducedExactly) {
  for (const Case& c : cases()) {
    const QuantizedTensor q8 = quantize(c.x.data(), c.x.size(), WeightFormat::Int8, c.block);
    const QuantizedTensor q4 = quantize(c.x.data(), c.x.size(), WeightFormat::Nf4, c.block);
    std::vector<float> out8(c.x.size()), out4(c.x.size());
    dequantize(q8, out8.data());
    dequantize(q4, out4.data());
    const std::vector<float> scale = block_absmax(c.x, c.block);
    int maxima = 0;
    for (size_t i = 0; i < c.x.size(); ++i) {
      if (std::fabs(c.x[i]) != scale[i / c.block]) continue;
      ++maxima;
      EXPECT_EQ(out8[i], c.x[i]) << i;
      EXPECT_EQ(out4[i], c.x[i]) << i;
      EXPECT_EQ(int8_code_at(q8, i), c.x[i] > 0 ? kInt8MaxCode : -kInt8MaxCode) << i;
      EXPECT_EQ(kNf4Codebook[nf4_code_at(q4, i)], c.x[i] > 0 ? 1.0f : -1.0f) << i;
    }
    EXPECT_GE(maxima, static_cast<int>(ceil_div(c.x.size(), c.block)));
  }
}

TEST(Quantize, ZeroBlocksStoreScaleZeroAndGiveZeros) {
  std::vector<float> x(64 * 3 + 10, 0.0f);
  for (size_t i = 0; i < 64; ++i) x[i] = 0.01f * (static_cast<float>(i) - 30.0f);  // block 0 non-zero
  x[65] = -0.0f;                                                                    // block 1: zeros, one negative
  x[64 * 2 + 5] = 7.0f;                                                             // block 2 non-zero
  for (const WeightFormat f : {WeightFormat::Int8, WeightFormat::Nf4}) {
    const QuantizedTensor q = quantize(x.data(), x.size(), f);
    ASSERT_EQ(q.scales.size(), 4u);
    EXPECT_EQ(q.scales[1], 0.0f);
    EXPECT_EQ(q.scales[3], 0.0f);  // the partial last block
    const std::vector<float> out = quantize_roundtrip(x.data(), x.size(), f);
    for (size_t i = 64; i < 128; ++i) EXPECT_EQ(out[i], 0.0f) << to_string(f) << " " << i;
    for (size_t i = 192; i < x.size(); ++i) EXPECT_EQ(out[i], 0.0f) << to_string(f) << " " << i;
    for (size_t i = 64 * 2; i < 64 * 3; ++i) EXPECT_EQ(out[i], x[i]) << i;  // 0 and ±scale are levels of both
  }
  const std::vector<float> zeros(5, 0.0f);
  const QuantizedTensor q = quantize(zeros.data(), zeros.size(), WeightFormat::Nf4);
  for (size_t i = 0; i < zeros.size(); ++i) EXPECT_EQ(kNf4Codebook[nf4_code_at(q, i)], 0.0f) << i;
}

TEST(Quantize, Nf4PacksTheEvenValueInTheHighNibble) {
  const std::vector<float> x{1.0f, -1.0f, 0.0f};  // levels 15, 0 and 7; the last byte's low nibble is unused
  const QuantizedTensor q = quantize(x.data(), x.size(), WeightFormat::Nf4);
  EXPECT_EQ(q.codes, (std::vector<uint8_t>{15 << 4 | 0, 7 << 4}));
}

// A value exactly halfway between two levels goes to the lower one. With scale 1, x / scale is x; only the
// midpoints that are floats can be tried, and there are some on both sides of zero.
TEST(Quantize, Nf4TiesGoToTheLowerLevel) {
  int ties = 0;
  for (int k = 0; k + 1 < kLevels; ++k) {
    const double mid = (static_cast<double>(kNf4Codebook[k]) + kNf4Codebook[k + 1]) / 2;
    if (static_cast<float>(mid) != mid) continue;
    const std::vector<float> x{static_cast<float>(mid), 1.0f, -1.0f};
    const QuantizedTensor q = quantize(x.data(), x.size(), WeightFormat::Nf4);
    EXPECT_EQ(nf4_code_at(q, 0), k) << mid;
    ++ties;
  }
  EXPECT_GE(ties, 2);
}

TEST(Quantize, BytesMatchTheClosedForm) {
  for (const size_t count : {0, 1, 2, 63, 64, 65, 100, 127, 128, 1000, 1001}) {
    std::vector<float> x = gaussian(count, 4);
    for (const int block : {1, 7, 64, 256}) {
      const size_t blocks = ceil_div(count, block);
      const QuantizedTensor q4 = quantize(x.data(), count, WeightFormat::Nf4, block);
      const QuantizedTensor q8 = quantize(x.data(), count, WeightFormat::Int8, block);
      const QuantizedTensor q32 = quantize(x.data(), count, WeightFormat::Fp32, block);
      EXPECT_EQ(q4.bytes(), ceil_div(count, 2) + 4 * blocks) << count << " " << block;
      EXPECT_EQ(q8.bytes(), count + 4 * blocks) << count << " " << block;
      EXPECT_EQ(q32.bytes(), 4 * count) << count << " " << block;
      // storage_bytes says the same without quantizing.
      EXPECT_EQ(storage_bytes(count, WeightFormat::Nf4, block), q4.bytes()) << count << " " << block;
      EXPECT_EQ(storage_bytes(count, WeightFormat::Int8, block), q8.bytes()) << count << " " << block;
      EXPECT_EQ(storage_bytes(count, WeightFormat::Fp32, block), q32.bytes()) << count << " " << block;
      EXPECT_EQ(q4.scales.size(), blocks);
      EXPECT_EQ(q4.count, count);
      EXPECT_EQ(q4.block, block);
    }
  }
}

TEST(Quantize, BitsPerWeightMatchesTheStorageOfWholeBlocks) {
  EXPECT_EQ(bits_per_weight(WeightFormat::Nf4), 4.5);  // QLoRA: 32/64 = 0.5 bits per parameter of scales
  EXPECT_EQ(bits_per_weight(WeightFormat::Int8), 8.5);
  EXPECT_EQ(bits_per_weight(WeightFormat::Fp32), 32.0);
  for (const int block : {2, 32, 64, 128, 256}) {
    EXPECT_DOUBLE_EQ(bits_per_weight(WeightFormat::Nf4, block), 4.0 + 32.0 / block);
    EXPECT_DOUBLE_EQ(bits_per_weight(WeightFormat::Int8, block), 8.0 + 32.0 / block);
    for (const size_t blocks : {1, 3, 10}) {
      const size_t count = blocks * block;
      const std::vector<float> x = gaussian(count, 5);
      for (const WeightFormat f : {WeightFormat::Fp32, WeightFormat::Int8, WeightFormat::Nf4})
        EXPECT_DOUBLE_EQ(bits_per_weight(f, block), 8.0 * quantize(x.data(), count, f, block).bytes() / count)
            << to_string(f) << " " << block << " " << count;
    }
  }
  EXPECT_THROW(bits_per_weight(WeightFormat::Nf4, 0), std::invalid_argument);
}

TEST(Quantize, Fp32StoresTheValuesBitForBit) {
  const std::vector<float> x{1.5f, -0.0f, 1e-45f, -3.4e38f, 0.1f};
  const QuantizedTensor q = quantize(x.data(), x.size(), WeightFormat::Fp32);
  EXPECT_TRUE(q.scales.empty());
  const std::vector<float> out = quantize_roundtrip(x.data(), x.size(), WeightFormat::Fp32);
  EXPECT_EQ(std::memcmp(out.data(), x.data(), sizeof(float) * x.size()), 0);
}

TEST(Quantize, IsDeterministicAndEachBlockDependsOnlyOnItself) {
  const std::vector<float> x = gaussian(640, 6);
  for (const WeightFormat f : {WeightFormat::Int8, WeightFormat::Nf4}) {
    const QuantizedTensor a = quantize(x.data(), x.size(), f), b = quantize(x.data(), x.size(), f);
    EXPECT_EQ(a.scales, b.scales);
    EXPECT_EQ(a.codes, b.codes);
    // Blocks 2 and 3 on their own give the same values as within the whole tensor.
    const std::vector<float> whole = quantize_roundtrip(x.data(), x.size(), f);
    const std::vector<float> part = quantize_roundtrip(x.data() + 128, 128, f);
    EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + 128)) << to_string(f);
  }
}

TEST(Quantize, RejectsNonFiniteValuesNamingTheIndexAndBadBlocks) {
  for (const WeightFormat f : {WeightFormat::Fp32, WeightFormat::Int8, WeightFormat::Nf4}) {
    for (const float bad : {NAN, INFINITY, -INFINITY}) {
      std::vector<float> x(100, 0.5f);
      x[77] = bad;
      try {
        quantize(x.data(), x.size(), f);
        ADD_FAILURE() << to_string(f) << " accepted " << bad;
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("value 77 "), std::string::npos) << e.what();
      }
    }
    const std::vector<float> x(4, 1.0f);
    EXPECT_THROW(quantize(x.data(), x.size(), f, 0), std::invalid_argument);
    EXPECT_THROW(quantize(x.data(), x.size(), f, -64), std::invalid_argument);
  }
  EXPECT_TRUE(quantize(nullptr, 0, WeightFormat::Nf4).codes.empty());
}

TEST(Quantize, DequantizeRejectsTensorsThatDoNotFitTheirFormat) {
  const std::vector<float> x = gaussian(100, 7);
  std::vector<float> out(x.size());
  QuantizedTensor q = quantize(x.data(), x.size(), WeightFormat::Nf4);
  q.codes.pop_back();
  EXPECT_THROW(dequantize(q, out.data()), std::invalid_argument);
  q = quantize(x.data(), x.size(), WeightFormat::Int8);
  q.scales.push_back(1.0f);
  EXPECT_THROW(dequantize(q, out.data()), std::invalid_argument);
  q = quantize(x.data(), x.size(), WeightFormat::Int8);
  q.block = 0;
  EXPECT_THROW(dequantize(q, out.data()), std::invalid_argument);
}

// Error on N(0, 1) weights in blocks of 64, against bounds derived from the codes:
// - every element's error is at most half its gap times its block's scale s (largest NF4 gap: g_max, between −1
//   and the next level), so ‖err‖² ≤ Σ_i (g_max/2)² s_i²: a hard bound;
// - x / s is spread smoothly over a gap, so the error is close to uniform over [0, g/2] on each side, giving
//   E err² = g² s² / 12 (g the gap holding x / s; the block maxima, exact, contribute 0). For int8, g = 1/127
//   and the density is flat on that scale: the estimate holds to sampling error (≈ 0.5 % here; allowed 3 %).
//   For NF4 the Gaussian density falls across the outer gaps, where x / s concentrates next to the inner level,
//   so the estimate is an upper bound rather than an equality: allowed within [0.9, 1.02] of it.
TEST(Quantize, GaussianWeightsErrorMatchesTheBounds) {
  const int block = 64;
  const std::vector<float> x = gaussian(1 << 16, 8);
  const std::vector<float> scale = block_absmax(x, block);
  const std::vector<float> out8 = quantize_roundtrip(x.data(), x.size(), WeightFormat::Int8, block);
  const std::vector<float> out4 = quantize_roundtrip(x.data(), x.size(), WeightFormat::Nf4, block);
  double g_max = 0;
  for (int k = 1; k < kLevels; ++k) g_max = std::max(g_max, static_cast<double>(kNf4Codebook[k] - kNf4Codebook[k - 1]));
  double norm2 = 0, err8 = 0, err4 = 0, hard4 = 0, model8 = 0, model4 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double s = scale[i / block], xi = x[i];
    norm2 += xi * xi;
    err8 += (xi - out8[i]) * (xi - out8[i]);
    err4 += (xi - out4[i]) * (xi - out4[i]);
    hard4 += (g_max / 2 * s) * (g_max / 2 * s);
    if (std::fabs(xi) == s) continue;
    model8 += s * s / (kInt8MaxCode * kInt8MaxCode * 12.0);
    const auto above = std::upper_bound(kNf4Codebook.begin(), kNf4Codebook.end(), xi / s);
    const double g = *above - *(above - 1);
    model4 += g * g * s * s / 12;
  }
  const double rel8 = std::sqrt(err8 / norm2), rel4 = std::sqrt(err4 / norm2);
  EXPECT_LT(10 * rel8, rel4);  // int8's step 1/127 is over ten times finer than any NF4 gap (≥ 0.0796)
  EXPECT_LE(err4, hard4);
  EXPECT_NEAR(std::sqrt(err8 / model8), 1.0, 0.03);
  EXPECT_LE(std::sqrt(err4 / model4), 1.02);
  EXPECT_GE(std::sqrt(err4 / model4), 0.9);
  std::cout << "relative RMS error on N(0,1), block 64: int8 " << rel8 << ", nf4 " << rel4 << "; nf4 / model "
            << std::sqrt(err4 / model4) << ", hard bound " << std::sqrt(hard4 / norm2) << "\n";
}

}  // namespace
}  // namespace dtsim::models
