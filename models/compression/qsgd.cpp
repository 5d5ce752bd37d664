// QSGD (Alistarh et al. 2017, "QSGD: Communication-Efficient SGD via Gradient Quantization and Encoding").
// Each bucket of values v (the whole tensor when qsgd_bucket is 0) is sent as its norm ‖v‖ and, per value, a
// sign and a level l in [0, s]:
//   r = s·|v_i| / ‖v‖,  l = ⌊r⌋ + 1 with probability r − ⌊r⌋ (else ⌊r⌋),  decoded = sign(v_i)·‖v‖·l/s.
// E[decoded] = v_i, and E‖Q(v) − v‖² = (‖v‖/s)² Σ_i p_i(1 − p_i) ≤ min(d/s², √d/s)‖v‖² (Lemma 3.1), p_i the
// fractional parts. The rounding draws come from a stream seeded by (seed, worker, step, tensor), one uniform
// per value in index order. Quantisation needs one random draw per value: done on a host copy.
//
// Encoding charged: a fixed width of 1 sign bit + ⌈log2(s+1)⌉ level bits per value (no Elias coding), and the
// norm of each bucket at 4 bytes. A non-finite norm decodes to NaN for the whole bucket, so that overflow is
// not hidden from the receivers.
#include <algorithm>
#include <cmath>
#include <limits>

#include "models/compression/codec.hpp"

namespace dtsim::models::compression_detail {
namespace {

template <class T>
class QsgdCodec final : public Codec<T> {
 public:
  using Codec<T>::Codec;

  WireOp encode(int rank, size_t t, T* x, int64_t step, CompressionStats&) override {
    const size_t n = this->size(t);
    const size_t bucket = this->settings_.qsgd_bucket == 0 ? n : std::min(this->settings_.qsgd_bucket, n);
    const double s = this->settings_.qsgd_levels;
    std::vector<T>& v = this->host_copy(x, n);
    Rng rng(stream_seed(this->settings_.seed, "qsgd", static_cast<uint64_t>(rank), step, t));
    uint64_t buckets = 0;
    for (size_t begin = 0; begin < n; begin += bucket, ++buckets) {
      const size_t end = std::min(n, begin + bucket);
      double sum_squares = 0.0;
      for (size_t j = begin; j < end; ++j) sum_squares += static_cast<double>(v[j]) * static_cast<double>(v[j]);
      const double norm = std::sqrt(sum_squares);
      for (size_t j = begin; j < end; ++j) {
        const double u = rng.uniform();
        if (!std::isfinite(norm)) {
          v[j] = std::numeric_limits<T>::quiet_NaN();
          continue;
        }
        if (norm == 0.0) continue;  // all zero already
        const double magnitude = std::fabs(static_cast<double>(v[j]));
        const double r = std::min(s, s * magnitude / norm);  // ≤ s up to rounding
        const double floor_r = std::floor(r);
        const double level = floor_r + (u < r - floor_r ? 1.0 : 0.0);
        const double decoded = norm * level / s;
        v[j] = static_cast<T>(v[j] < T(0) ? -decoded : decoded);
      }
    }
    this->upload_host(x, n);
    const uint64_t bits_per_value = 1 + index_bits(static_cast<uint64_t>(this->settings_.qsgd_levels) + 1);
    return {t, Collective::AllGather, kFp32Bytes * buckets + whole_bytes(n * bits_per_value)};
  }
};

}  // namespace

template <class T>
std::unique_ptr<Codec<T>> make_qsgd_codec(gpu::Ops<T>& ops, const std::vector<TensorLayout>& layouts,
                                          const CompressionSettings& settings) {
  return std::make_unique<QsgdCodec<T>>(ops, layouts, settings);
}

template std::unique_ptr<Codec<float>> make_qsgd_codec(gpu::Ops<float>&, const std::vector<TensorLayout>&,
                                                       const CompressionSettings&);
template std::unique_ptr<Codec<double>> make_qsgd_codec(gpu::Ops<double>&, const std::vector<TensorLayout>&,
                                                        const CompressionSettings&);

CompressorDescriptor describe_qsgd() {
  using S = CompressionSetting;
  return {CompressorKind::Qsgd, "qsgd", CompressorFamily::Quantisation,
          compressed_settings({S::QsgdLevels, S::QsgdBucket, S::Seed}), &make_qsgd_codec<float>,
          &make_qsgd_codec<double>};
}

}  // namespace dtsim::models::compression_detail
