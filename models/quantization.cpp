#include "quantization.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace dtsim::models {
namespace {

// Decision thresholds between neighbouring NF4 levels. The sum of two floats and its half are exact in double,
// so a value is compared against the true midpoints.
const std::array<double, 15>& nf4_midpoints() {
  static const std::array<double, 15> midpoints = [] {
    std::array<double, 15> m{};
    for (size_t i = 0; i < m.size(); ++i)
      m[i] = (static_cast<double>(kNf4Codebook[i]) + static_cast<double>(kNf4Codebook[i + 1])) / 2.0;
    return m;
  }();
  return midpoints;
}

// The nearest level to r in [−1, 1]: the number of midpoints strictly below r, so that an r exactly halfway
// between two levels takes the lower one.
uint8_t nf4_code(double r) {
  const auto& m = nf4_midpoints();
  return static_cast<uint8_t>(std::lower_bound(m.begin(), m.end(), r) - m.begin());
}

size_t block_count(size_t count, int block) {
  const size_t b = static_cast<size_t>(block);
  return count / b + (count % b != 0 ? 1 : 0);  // not (count + b − 1) / b, which could overflow
}

size_t code_bytes(WeightFormat format, size_t count) {
  switch (format) {
    case WeightFormat::Fp32: return sizeof(float) * count;
    case WeightFormat::Int8: return count;
    case WeightFormat::Nf4: return (count + 1) / 2;
  }
  return 0;
}

void check_block(const char* caller, int block) {
  if (block < 1)
    throw std::invalid_argument(std::string(caller) + ": block size must be at least 1, got " + std::to_string(block));
}

// Kept apart from the loop over values so that an error names the index whatever the format.
void check_finite(const float* x, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (!std::isfinite(x[i]))
      throw std::invalid_argument("quantize: value " + std::to_string(i) + " is " +
                                  (std::isnan(x[i]) ? "NaN" : "infinite") + "; weights to quantize must be finite");
}

}  // namespace

const NameTable<WeightFormat>& weight_format_table() {
  static const NameTable<WeightFormat> table{
      {WeightFormat::Fp32, "fp32"}, {WeightFormat::Int8, "int8"}, {WeightFormat::Nf4, "nf4"}};
  return table;
}

std::vector<std::string> weight_format_names() { return weight_format_table().names(); }

const char* to_string(WeightFormat format) { return weight_format_table().name(format); }

WeightFormat parse_weight_format(const std::string& text) {
  if (const auto f = weight_format_table().parse(text)) return *f;
  throw std::invalid_argument("unknown weight format '" + text + "'; accepted: " + weight_format_table().comma_list());
}

QuantizedTensor quantize(const float* x, size_t count, WeightFormat format, int block) {
  check_block("quantize", block);
  check_finite(x, count);
  QuantizedTensor q;
  q.format = format;
  q.count = count;
  q.block = block;
  q.codes.assign(code_bytes(format, count), 0);
  if (format == WeightFormat::Fp32) {
    if (count > 0) std::memcpy(q.codes.data(), x, sizeof(float) * count);
    return q;
  }
  const size_t b = static_cast<size_t>(block);
  q.scales.reserve(block_count(count, block));
  for (size_t begin = 0; begin < count; begin += b) {
    const size_t end = std::min(count, begin + b);
    float scale = 0.0f;
    for (size_t i = begin; i < end; ++i) scale = std::max(scale, std::fabs(x[i]));
    q.scales.push_back(scale);
    // A zero block takes r = 0 rather than 0/0: its codes are those of 0 (int8 0, nf4 level 7), dequantizing to 0.
    for (size_t i = begin; i < end; ++i) {
      // |x| <= scale, and correctly rounded division keeps |r| <= 1: no clamping needed.
      const double r = scale == 0.0f ? 0.0 : static_cast<double>(x[i]) / static_cast<double>(scale);
      if (format == WeightFormat::Int8) {
        const long code = std::lround(r * kInt8MaxCode);
        q.codes[i] = static_cast<uint8_t>(static_cast<int8_t>(code));
      } else {
        const uint8_t code = nf4_code(r);
        q.codes[i / 2] |= static_cast<uint8_t>(i % 2 == 0 ? code << 4 : code);
      }
    }
  }
  return q;
}

void dequantize(const QuantizedTensor& q, float* out) {
  check_block("dequantize", q.block);
  const size_t scales = q.format == WeightFormat::Fp32 ? 0 : block_count(q.count, q.block);
  if (q.codes.size() != code_bytes(q.format, q.count) || q.scales.size() != scales)
    throw std::invalid_argument(std::string("dequantize: a ") + to_string(q.format) + " tensor of " +
                                std::to_string(q.count) + " values in blocks of " + std::to_string(q.block) +
                                " needs " + std::to_string(code_bytes(q.format, q.count)) + " code bytes and " +
                                std::to_string(scales) + " scales, got " + std::to_string(q.codes.size()) + " and " +
                                std::to_string(q.scales.size()));
  if (q.format == WeightFormat::Fp32) {
    if (q.count > 0) std::memcpy(out, q.codes.data(), sizeof(float) * q.count);
    return;
  }
  const size_t b = static_cast<size_t>(q.block);
  for (size_t i = 0; i < q.count; ++i) {
    const float scale = q.scales[i / b];
    if (q.format == WeightFormat::Int8) {
      // code · scale is exact in double (8 + 24 bits), so ±127 gives back exactly ±scale.
      const double code = static_cast<int8_t>(q.codes[i]);
      out[i] = static_cast<float>(code * static_cast<double>(scale) / kInt8MaxCode);
    } else {
      const uint8_t byte = q.codes[i / 2];
      const int code = i % 2 == 0 ? byte >> 4 : byte & 0x0F;
      out[i] = kNf4Codebook[static_cast<size_t>(code)] * scale;  // one rounding of the exact product
    }
  }
}

std::vector<float> quantize_roundtrip(const float* x, size_t count, WeightFormat format, int block) {
  std::vector<float> out(count);
  dequantize(quantize(x, count, format, block), out.data());
  return out;
}

size_t storage_bytes(size_t count, WeightFormat format, int block) {
  if (block < 1) throw std::invalid_argument("storage_bytes: block must be at least 1, got " + std::to_string(block));
  const size_t blocks = (count + static_cast<size_t>(block) - 1) / static_cast<size_t>(block);
  switch (format) {
    case WeightFormat::Fp32: return sizeof(float) * count;
    case WeightFormat::Int8: return count + sizeof(float) * blocks;
    case WeightFormat::Nf4: return (count + 1) / 2 + sizeof(float) * blocks;
  }
  return sizeof(float) * count;
}

double bits_per_weight(WeightFormat format, int block) {
  check_block("bits_per_weight", block);
  const double scale_bits = 32.0 / block;
  switch (format) {
    case WeightFormat::Fp32: return 32.0;
    case WeightFormat::Int8: return 8.0 + scale_bits;
    case WeightFormat::Nf4: return 4.0 + scale_bits;
  }
  return 0.0;
}

}  // namespace dtsim::models
