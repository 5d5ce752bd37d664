// Storage formats for mixed-precision emulation: fp32, bf16 and fp16 values kept in a float. The
// conversions are bit-exact IEEE 754 round-to-nearest-even, with overflow to ±inf, gradual underflow
// (subnormals) and NaN preserved as a quiet NaN. They compile for the host and, under nvcc, for the device,
// so both backends round identically.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define DTSIM_HOST_DEVICE __host__ __device__
#else
#define DTSIM_HOST_DEVICE
#endif

namespace dtsim::gpu {

enum class NumberFormat { Fp32, Bf16, Fp16 };

inline const char* to_string(NumberFormat f) {
  switch (f) {
    case NumberFormat::Fp32: return "fp32";
    case NumberFormat::Bf16: return "bf16";
    case NumberFormat::Fp16: return "fp16";
  }
  return "?";
}

// Bytes one value takes when stored (or sent) in `f`.
inline int storage_bytes(NumberFormat f) { return f == NumberFormat::Fp32 ? 4 : 2; }

DTSIM_HOST_DEVICE inline uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

DTSIM_HOST_DEVICE inline float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

// bf16 keeps fp32's 8 exponent bits and the top 7 mantissa bits. Adding 0x7FFF plus the lowest kept bit
// before truncating rounds to nearest, ties to even; a carry out of the mantissa correctly bumps the
// exponent, up to infinity.
DTSIM_HOST_DEVICE inline uint16_t float_to_bf16_bits(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  const uint32_t lowest_kept = (u >> 16) & 1u;
  return static_cast<uint16_t>((u + 0x7FFFu + lowest_kept) >> 16);
}

DTSIM_HOST_DEVICE inline float bf16_bits_to_float(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

// fp16: 5 exponent bits (bias 15), 10 mantissa bits; largest finite 65504, smallest normal 2^-14, smallest
// subnormal 2^-24.
DTSIM_HOST_DEVICE inline uint16_t float_to_fp16_bits(float f) {
  const uint32_t u = float_bits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);  // NaN → quiet NaN
  // 65520 is halfway between 65504 and 65536 (which does not exist): ties-to-even sends it, and all above
  // it, to infinity.
  if (a >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);
  if (a >= 0x38800000u) {  // normal in fp16 (≥ 2^-14)
    a += 0xFFFu + ((a >> 13) & 1u);                                 // round the 13 dropped bits, ties to even
    return static_cast<uint16_t>(sign | ((a - 0x38000000u) >> 13));  // rebias exponent 127 → 15
  }
  // Subnormal or zero: adding 0.5f aligns the value so that the FPU's own round-to-nearest-even leaves the
  // fp16 subnormal mantissa (units of 2^-24) in the low bits.
  const float aligned = bits_float(a) + 0.5f;
  return static_cast<uint16_t>(sign | (float_bits(aligned) - 0x3F000000u));
}

DTSIM_HOST_DEVICE inline float fp16_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  const uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa × 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return bits_float(float_bits(magnitude) | sign);
  }
  if (exponent == 31) return bits_float(sign | 0x7F800000u | (mantissa << 13));  // inf or NaN
  return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

DTSIM_HOST_DEVICE inline float round_to(float x, NumberFormat format) {
  switch (format) {
    case NumberFormat::Fp32: return x;
    case NumberFormat::Bf16: return bf16_bits_to_float(float_to_bf16_bits(x));
    case NumberFormat::Fp16: return fp16_bits_to_float(float_to_fp16_bits(x));
  }
  return x;
}

}  // namespace dtsim::gpu
