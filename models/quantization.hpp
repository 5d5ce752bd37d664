// Weight quantization for emulating a frozen base model stored in 8 or 4 bits and dequantized on use, as in
// QLoRA (Dettmers et al. 2023, "QLoRA: Efficient Finetuning of Quantized LLMs", arXiv:2305.14314).
//
// Block-wise absmax quantization: the tensor is cut into blocks of `block` consecutive values (the last block may
// be shorter) and each block stores one fp32 scale, its largest magnitude max |x|, so that one outlier only costs
// the precision of its own block. Within a block every value is stored as a code relative to that scale:
//   int8: code = round(x / scale · 127) in [−127, 127], ties away from zero; value = code · scale / 127.
//   nf4:  code = index of the kNf4Codebook level nearest to x / scale; value = kNf4Codebook[code] · scale.
// Both reproduce the block's largest-magnitude element exactly (its code is ±127, resp. the level ±1), and a
// block whose absmax is 0 stores scale 0 and dequantizes to zeros. Codes are found in double precision (x / scale
// is computed in double), so the result does not depend on the compiler's float contraction.
//
// Non-finite inputs throw std::invalid_argument naming the first offending index, in every format: one NaN would
// make its block's scale NaN (or an inf its scale inf, and every other value of the block 0 or NaN), silently
// destroying weights that were fine; a frozen base model with such a weight is a bug upstream.
//
// Double quantization of the scales (QLoRA §3) is not implemented: the scales are stored as plain fp32.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/name_table.hpp"

namespace dtsim::models {

enum class WeightFormat { Fp32, Int8, Nf4 };

// "fp32" | "int8" | "nf4"; throws std::invalid_argument naming the accepted values.
WeightFormat parse_weight_format(const std::string& text);
const char* to_string(WeightFormat format);
// The formats, in this order; the only place where their names are spelt.
const NameTable<WeightFormat>& weight_format_table();
std::vector<std::string> weight_format_names();

// QLoRA's block size; small blocks cost scale storage (32/block bits per weight), large ones precision.
inline constexpr int kDefaultQuantizationBlock = 64;
inline constexpr int kInt8MaxCode = 127;  // symmetric: −128 is never produced, so that the range is ±scale

// The 4-bit NormalFloat levels: quantiles of N(0, 1) normalised to [−1, 1], with an exact 0 and one more positive
// level than negative ones. Values as published in the QLoRA paper (arXiv:2305.14314, Appendix E) and in
// bitsandbytes (the NF4 lookup table of csrc/kernels.cu); each literal is exactly the published float32 value.
inline constexpr std::array<float, 16> kNf4Codebook{
    -1.0f,
    -0.6961928009986877f,
    -0.5250730514526367f,
    -0.39491748809814453f,
    -0.28444138169288635f,
    -0.18477343022823334f,
    -0.09105003625154495f,
    0.0f,
    0.07958029955625534f,
    0.16093020141124725f,
    0.24611230194568634f,
    0.33791524171829224f,
    0.44070982933044434f,
    0.5626170039176941f,
    0.7229568362236023f,
    1.0f};

// A quantized tensor. Layout of `codes`:
//   fp32: the count float values, 4 bytes each in host byte order (no scales).
//   int8: one byte per value, the code as a two's-complement int8_t.
//   nf4:  two codes per byte in value order, the even-indexed value in the high nibble (as bitsandbytes packs
//         them); with an odd count the last byte's low nibble is 0.
// scales: one per block, ceil(count / block) of them (none for fp32).
struct QuantizedTensor {
  WeightFormat format = WeightFormat::Fp32;
  size_t count = 0;
  int block = kDefaultQuantizationBlock;
  std::vector<float> scales;
  std::vector<uint8_t> codes;

  // Storage in bytes: the codes plus 4 per scale (4 · count for fp32).
  size_t bytes() const { return codes.size() + sizeof(float) * scales.size(); }
};

// Quantizes x[0, count). block >= 1 (else std::invalid_argument); x may be null when count is 0.
QuantizedTensor quantize(const float* x, size_t count, WeightFormat format, int block = kDefaultQuantizationBlock);
// out[0, q.count) = the values q stands for. Throws std::invalid_argument when q's sizes do not fit its format,
// count and block (a QuantizedTensor assembled by hand).
void dequantize(const QuantizedTensor& q, float* out);
// dequantize(quantize(x, …)): the values a model stored in `format` computes with.
std::vector<float> quantize_roundtrip(const float* x, size_t count, WeightFormat format,
                                      int block = kDefaultQuantizationBlock);

// The bytes quantize(x, count, format, block).bytes() gives, without quantizing: fp32 4·count; int8 count plus 4 per
// block; nf4 ceil(count / 2) plus 4 per block (blocks: ceil(count / block)). block >= 1.
size_t storage_bytes(size_t count, WeightFormat format, int block = kDefaultQuantizationBlock);

// Storage bits per weight when count is a multiple of the block (and even, for nf4): the code bits plus one fp32
// scale shared by `block` weights. fp32: 32; int8: 8 + 32/block; nf4: 4 + 32/block. block >= 1.
double bits_per_weight(WeightFormat format, int block = kDefaultQuantizationBlock);

}  // namespace dtsim::models
