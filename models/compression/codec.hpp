// Internal to models/compression: the interface each compressor family implements, and what they share (byte
// arithmetic of the encodings, seeded streams, host copies). The engine (engine.cpp) wraps a codec with error
// feedback, start_step, the layer filter and the metrics, for one worker or for a group.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <vector>

#include "gpu/buffer.hpp"
#include "models/compression/compression.hpp"
#include "models/compression/registry.hpp"
#include "models/random.hpp"

namespace dtsim::models::compression_detail {

// ---- byte arithmetic of the encodings ---------------------------------------------------------------------
constexpr uint64_t kFp32Bytes = 4;

// Bits that can write every index in [0, d): ⌈log2 d⌉ (0 when d = 1).
inline uint64_t index_bits(uint64_t d) {
  uint64_t bits = 0;
  while (bits < 64 && (uint64_t{1} << bits) < d) ++bits;
  return bits;
}
inline uint64_t whole_bytes(uint64_t bits) { return (bits + 7) / 8; }

// k fp32 values and their k indices in one message, with a 4-byte count first when the count varies.
inline uint64_t sparse_message_bytes(uint64_t k, uint64_t d, IndexEncoding encoding, bool count_header) {
  const uint64_t per_index = encoding == IndexEncoding::Bits ? index_bits(d) : 32;
  return (count_header ? kFp32Bytes : 0) + whole_bytes(k * (32 + per_index));
}

// k = max(1, round(ratio·d)), at most d.
uint64_t kept_count(double ratio, size_t d);

// The stream for one (purpose, worker, step, tensor): every draw depends on these alone, never on the order in
// which the simulator schedules workers.
inline uint64_t stream_seed(uint64_t seed, std::string_view purpose, uint64_t worker, int64_t step, size_t tensor) {
  return derive_seed(derive_seed(derive_seed(seed, purpose, worker), "step", static_cast<uint64_t>(step)), "tensor",
                     tensor);
}

// ---- the codec interface ----------------------------------------------------------------------------------
template <class T>
class Codec {
 public:
  Codec(gpu::Ops<T>& ops, const std::vector<TensorLayout>& layouts, const CompressionSettings& settings)
      : ops_(ops), layouts_(layouts), settings_(settings) {}
  virtual ~Codec() = default;

  // Whether this codec compresses the tensor at all (PowerSGD: matrices only).
  virtual bool compresses(const TensorLayout& layout) const { (void)layout; return true; }

  // Overwrites x (tensor t of `rank`'s input, error feedback already added, backend memory) with what the
  // receivers decode from the message, and returns the message.
  virtual WireOp encode(int rank, size_t t, T* x, int64_t step, CompressionStats& stats) = 0;

  // Group form of the per-worker messages: overwrites `mean` with the combination of the workers' decoded
  // tensors (rank order). The default is their average; majority vote takes a vote.
  virtual void combine_decoded(size_t t, const std::vector<const T*>& decoded, T* mean);

  // Codecs whose group form needs every worker's input at once (PowerSGD, the narrow-format sum of fp16/bf16)
  // answer true; the engine then defers them to combine_inputs().
  virtual bool combines_inputs() const { return false; }
  // Their messages for tensor t, the same for every worker and known before the data.
  virtual std::vector<WireOp> input_messages(size_t t) const { (void)t; return {}; }
  // Overwrites `mean` with the group's result from the workers' inputs (rank order), then overwrites each input
  // with what that worker transmitted; returns ‖input − transmitted‖² per worker.
  virtual std::vector<double> combine_inputs(size_t t, const std::vector<T*>& inputs, int64_t step, T* mean) {
    (void)t, (void)inputs, (void)step, (void)mean;
    return {};
  }

 protected:
  size_t size(size_t t) const { return layouts_[t].tensor.size; }
  // Overwrites mean with (Σ decoded in rank order) · (1/N), the order and arithmetic of the uncompressed
  // synchronous average, so that "none" reproduces it bit for bit.
  void average(const std::vector<const T*>& decoded, size_t count, T* mean);
  std::vector<T>& host_copy(const T* x, size_t count);  // into a reused host buffer
  void upload_host(T* x, size_t count);                  // the host buffer back into x

  gpu::Ops<T>& ops_;
  const std::vector<TensorLayout>& layouts_;
  CompressionSettings settings_;
  std::vector<T> host_;
};

template <class T>
std::unique_ptr<Codec<T>> make_cast_codec(gpu::Ops<T>& ops, const std::vector<TensorLayout>& layouts,
                                          const CompressionSettings& settings);
template <class T>
std::unique_ptr<Codec<T>> make_sparse_codec(gpu::Ops<T>& ops, const std::vector<TensorLayout>& layouts,
                                            const CompressionSettings& settings);
template <class T>
std::unique_ptr<Codec<T>> make_qsgd_codec(gpu::Ops<T>& ops, const std::vector<TensorLayout>& layouts,
                                          const CompressionSettings& settings);
template <class T>
std::unique_ptr<Codec<T>> make_sign_codec(gpu::Ops<T>& ops, const std::vector<TensorLayout>& layouts,
                                          const CompressionSettings& settings);
template <class T>
std::unique_ptr<Codec<T>> make_powersgd_codec(gpu::Ops<T>& ops, const std::vector<TensorLayout>& layouts,
                                              const CompressionSettings& settings);

// ---- the compressors: each codec file describes its kinds; registry.cpp lists them ------------------------
// `own` plus what the engine reads for every compressor that encodes (error_feedback, start_step,
// min_tensor_size), in CompressionSetting order.
std::vector<CompressionSetting> compressed_settings(std::initializer_list<CompressionSetting> own);

CompressorDescriptor describe_none();         // cast.cpp
CompressorDescriptor describe_fp16();         // cast.cpp
CompressorDescriptor describe_bf16();         // cast.cpp
CompressorDescriptor describe_topk();         // sparse.cpp
CompressorDescriptor describe_randomk();      // sparse.cpp
CompressorDescriptor describe_qsgd();         // qsgd.cpp
CompressorDescriptor describe_sign();         // sign.cpp
CompressorDescriptor describe_scaled_sign();  // sign.cpp
CompressorDescriptor describe_signum();       // sign.cpp
CompressorDescriptor describe_powersgd();     // powersgd.cpp

}  // namespace dtsim::models::compression_detail
