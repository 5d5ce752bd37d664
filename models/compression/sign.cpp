// One bit per value:
//   sign         signSGD (Bernstein et al. 2018): decoded ±1
//   scaled-sign  (‖x‖₁/d)·sign(x) (Karimireddy et al. 2019, the compressor of EF-SignSGD): decoded ±‖x‖₁/d,
//                the scale sent at 4 bytes
//   signum       sign of the worker's momentum m = β·m + (1 − β)·x (Bernstein et al. 2018): decoded ±1
// A bit has no zero: by default (sign_of_zero = plus) sign(0) is sent as +1 (−0 too); sign_of_zero = zero sends
// it as 0, the papers' sign, still charged one bit. NaN compares false and is sent as −1: check gradients for
// overflow before compressing, or the overflow is lost here.
//
// In a group the workers' bits are all-gathered (a bit cannot be summed on the wire without widening it).
// Without majority vote the receivers average the decoded values; with it (Bernstein et al. 2018, Algorithm 3)
// they take sign(Σ_i sign_i) per value, 0 where the votes tie. The signs are taken on a host copy (gpu::Ops has
// no sign op); Signum's momentum is updated with backend ops.
#include <cmath>
#include <map>

#include "models/compression/codec.hpp"

namespace dtsim::models::compression_detail {
namespace {

template <class T>
class SignCodec final : public Codec<T> {
 public:
  using Codec<T>::Codec;

  WireOp encode(int rank, size_t t, T* x, int64_t, CompressionStats&) override {
    gpu::Ops<T>& ops = this->ops_;
    const size_t n = this->size(t);
    const CompressorKind kind = this->settings_.kind;
    const T* source = x;
    if (kind == CompressorKind::Signum) {
      T* m = momentum(rank, t);
      const double beta = this->settings_.signum_momentum;
      ops.scale(static_cast<T>(beta), m, n);
      ops.axpy(static_cast<T>(1.0 - beta), x, m, n);
      source = m;
    }
    std::vector<T>& v = this->host_copy(source, n);
    T magnitude = T(1);
    if (kind == CompressorKind::ScaledSign) {
      double l1 = 0.0;
      for (const T value : v) l1 += std::fabs(static_cast<double>(value));
      magnitude = static_cast<T>(l1 / static_cast<double>(n));
    }
    const T at_zero = this->settings_.sign_of_zero == SignOfZero::Zero ? T(0) : magnitude;
    for (T& value : v) value = value > T(0) ? magnitude : value == T(0) ? at_zero : -magnitude;
    this->upload_host(x, n);
    const uint64_t scale_bytes = kind == CompressorKind::ScaledSign ? kFp32Bytes : 0;
    return {t, Collective::AllGather, scale_bytes + whole_bytes(n)};
  }

  void combine_decoded(size_t t, const std::vector<const T*>& decoded, T* mean) override {
    const size_t n = this->size(t);
    if (!this->settings_.majority_vote) {
      this->average(decoded, n, mean);
      return;
    }
    votes_.assign(n, 0);
    for (const T* d : decoded) {
      const std::vector<T>& v = this->host_copy(d, n);
      for (size_t j = 0; j < n; ++j) votes_[j] += v[j] > T(0) ? 1 : v[j] < T(0) ? -1 : 0;  // a sent zero abstains
    }
    std::vector<T>& out = this->host_;
    for (size_t j = 0; j < n; ++j) out[j] = votes_[j] > 0 ? T(1) : votes_[j] < 0 ? T(-1) : T(0);
    this->upload_host(mean, n);
  }

 private:
  T* momentum(int rank, size_t t) {
    std::vector<gpu::Buffer<T>>& per_tensor = momentum_[rank];
    if (per_tensor.empty()) per_tensor.resize(this->layouts_.size());
    gpu::Buffer<T>& m = per_tensor[t];
    if (m.empty()) {
      m = gpu::Buffer<T>(this->ops_, this->size(t));
      this->ops_.fill(m.data(), m.size(), T(0));
    }
    return m.data();
  }

  std::map<int, std::vector<gpu::Buffer<T>>> momentum_;  // by rank, then tensor
  std::vector<int> votes_;
};

}  // namespace

template <class T>
std::unique_ptr<Codec<T>> make_sign_codec(gpu::Ops<T>& ops, const std::vector<TensorLayout>& layouts,
                                          const CompressionSettings& settings) {
  return std::make_unique<SignCodec<T>>(ops, layouts, settings);
}

template std::unique_ptr<Codec<float>> make_sign_codec(gpu::Ops<float>&, const std::vector<TensorLayout>&,
                                                       const CompressionSettings&);
template std::unique_ptr<Codec<double>> make_sign_codec(gpu::Ops<double>&, const std::vector<TensorLayout>&,
                                                        const CompressionSettings&);

CompressorDescriptor describe_sign() {
  return {CompressorKind::Sign, "sign", CompressorFamily::Sign,
          compressed_settings({CompressionSetting::MajorityVote, CompressionSetting::SignOfZero}),
          &make_sign_codec<float>, &make_sign_codec<double>};
}

CompressorDescriptor describe_scaled_sign() {
  return {CompressorKind::ScaledSign, "scaled-sign", CompressorFamily::Sign,
          compressed_settings({CompressionSetting::SignOfZero}),
          &make_sign_codec<float>, &make_sign_codec<double>};
}

CompressorDescriptor describe_signum() {
  using S = CompressionSetting;
  return {CompressorKind::Signum, "signum", CompressorFamily::Sign,
          compressed_settings({S::SignumMomentum, S::MajorityVote, S::SignOfZero}), &make_sign_codec<float>,
          &make_sign_codec<double>};
}

}  // namespace dtsim::models::compression_detail
