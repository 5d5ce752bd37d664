// "none", "fp16" and "bf16": every value sent, at 4 or 2 bytes.
//
// In a group the narrow formats are summed in the narrow format, as an fp16 or bf16 allreduce does (NCCL keeps
// each partial sum in the buffer's type): the running sum, in rank order, is rounded to the format after every
// addition, so it overflows to infinity exactly when a real one would. That overflow is why PyTorch's fp16
// hook divides by the world size before the sum; with `predivide` each worker's x is scaled by 1/N before its
// cast and the sum is the mean; without it the sum is divided by N after the receivers widen it to T. The
// additions are emulated in T and then rounded (for float, a rare double rounding can differ from a native
// fp16 addition by one unit in the last place).
//
// What a worker transmitted (its residual under error feedback, its error in the statistics) is its own cast:
// round(x), or N·round(x/N) with predivide. A worker alone sends round(x); predivide needs a group.
#include <algorithm>

#include "models/compression/codec.hpp"

namespace dtsim::models::compression_detail {
namespace {

template <class T>
class CastCodec final : public Codec<T> {
 public:
  CastCodec(gpu::Ops<T>& ops, const std::vector<TensorLayout>& layouts, const CompressionSettings& s)
      : Codec<T>(ops, layouts, s) {
    format_ = s.kind == CompressorKind::Fp16   ? gpu::NumberFormat::Fp16
              : s.kind == CompressorKind::Bf16 ? gpu::NumberFormat::Bf16
                                               : gpu::NumberFormat::Fp32;
    size_t largest = 0;
    for (const TensorLayout& l : layouts) largest = std::max(largest, l.tensor.size);
    if (narrow()) {
      sent_ = gpu::Buffer<T>(ops, largest);
      diff_ = gpu::Buffer<T>(ops, largest);
    }
  }

  WireOp encode(int, size_t t, T* x, int64_t, CompressionStats&) override {
    const size_t n = this->size(t);
    if (narrow()) this->ops_.round_to_format(x, n, format_);
    return {t, Collective::Allreduce, bytes_per_value() * n};
  }

  bool combines_inputs() const override { return narrow(); }

  std::vector<WireOp> input_messages(size_t t) const override {
    return {{t, Collective::Allreduce, bytes_per_value() * this->size(t)}};
  }

  std::vector<double> combine_inputs(size_t t, const std::vector<T*>& inputs, int64_t, T* mean) override {
    gpu::Ops<T>& ops = this->ops_;
    const size_t n = this->size(t);
    const T workers = static_cast<T>(inputs.size());
    const T inverse = T(1) / workers;
    const bool divide_first = this->settings_.predivide && inputs.size() > 1;
    std::vector<double> errors;
    for (size_t i = 0; i < inputs.size(); ++i) {
      T* sent = sent_.data();
      ops.copy(sent, inputs[i], n);
      if (divide_first) ops.scale(inverse, sent, n);
      ops.round_to_format(sent, n, format_);
      if (i == 0) {
        ops.copy(mean, sent, n);
      } else {
        ops.axpy(T(1), sent, mean, n);
        ops.round_to_format(mean, n, format_);
      }
      // What this worker transmitted, in gradient units, and how far it is from its input.
      if (divide_first) ops.scale(workers, sent, n);
      ops.copy(diff_.data(), inputs[i], n);
      ops.axpy(T(-1), sent, diff_.data(), n);
      errors.push_back(ops.sum_squares(diff_.data(), n));
      ops.copy(inputs[i], sent, n);
    }
    if (!divide_first && inputs.size() > 1) ops.scale(inverse, mean, n);
    return errors;
  }

 private:
  bool narrow() const { return format_ != gpu::NumberFormat::Fp32; }
  uint64_t bytes_per_value() const { return narrow() ? 2 : kFp32Bytes; }

  gpu::NumberFormat format_;
  gpu::Buffer<T> sent_;
  gpu::Buffer<T> diff_;
};

}  // namespace

template <class T>
std::unique_ptr<Codec<T>> make_cast_codec(gpu::Ops<T>& ops, const std::vector<TensorLayout>& layouts,
                                          const CompressionSettings& settings) {
  return std::make_unique<CastCodec<T>>(ops, layouts, settings);
}

template std::unique_ptr<Codec<float>> make_cast_codec(gpu::Ops<float>&, const std::vector<TensorLayout>&,
                                                       const CompressionSettings&);
template std::unique_ptr<Codec<double>> make_cast_codec(gpu::Ops<double>&, const std::vector<TensorLayout>&,
                                                        const CompressionSettings&);

CompressorDescriptor describe_none() {
  return {CompressorKind::None, "none", CompressorFamily::None, {}, &make_cast_codec<float>, &make_cast_codec<double>};
}

CompressorDescriptor describe_fp16() {
  return {CompressorKind::Fp16, "fp16", CompressorFamily::Cast, compressed_settings({CompressionSetting::Predivide}),
          &make_cast_codec<float>, &make_cast_codec<double>};
}

CompressorDescriptor describe_bf16() {
  return {CompressorKind::Bf16, "bf16", CompressorFamily::Cast, compressed_settings({CompressionSetting::Predivide}),
          &make_cast_codec<float>, &make_cast_codec<double>};
}

}  // namespace dtsim::models::compression_detail
