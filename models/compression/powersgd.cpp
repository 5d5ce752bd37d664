// PowerSGD (Vogels, Karimireddy & Jaggi 2019, Algorithm 1): a rank-r approximation of each weight matrix M
// (m × n, see TensorLayout) by one step of subspace iteration, warm-started from the previous step's Q:
//   P = M Q;  allreduce-average P;  P̂ = orthonormalise(P);  Q = Mᵀ P̂;  allreduce-average Q;  decode P̂ Qᵀ
// with r = min(powersgd_rank, m, n). Vectors (biases, norm gains) are not compressed, as in the paper.
//
// Q (n × r) starts as standard normal draws from a stream seeded by (seed, tensor), the same on every worker,
// and each step's averaged Q is the next step's start. A column of Q that is exactly zero (after a zero
// gradient) would stay zero for ever, so it is redrawn from a stream seeded by (seed, step, tensor).
//
// Orthonormalisation: Gram–Schmidt, each projection done twice ("twice is enough": Giraud et al. 2005) so
// that P̂ is orthonormal to rounding even when P is ill-conditioned. A column that keeps less than 1000 ulp of
// its norm after the projections is numerically dependent on the previous ones and is set to zero (P̂ P̂ᵀ
// is then still a projector, onto the span of P).
//
// Everything is backend work (gemm, dot, axpy, scale, sum_squares), so it runs where the gradients live. The
// factors are kept transposed (Pᵀ: r × m, Qᵀ: r × n) so that each factor column is a contiguous row.
//
// A worker alone (Compressor) runs the same algorithm on its own matrix with its own Q and sends P̂ and Q.
// In a group the residual of each worker is its input minus the decoded average P̂ Q̄ᵀ, as in PyTorch's
// PowerSGD hook.
#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include "models/compression/codec.hpp"

namespace dtsim::models::compression_detail {
namespace {

using gpu::ConstMatrixView;
using gpu::MatrixView;
using gpu::Transpose;

template <class T>
class PowerSgdCodec final : public Codec<T> {
 public:
  PowerSgdCodec(gpu::Ops<T>& ops, const std::vector<TensorLayout>& layouts, const CompressionSettings& s)
      : Codec<T>(ops, layouts, s) {
    size_t p_size = 0, q_size = 0, matrix = 0;
    for (const TensorLayout& l : layouts) {
      if (!l.is_matrix()) continue;
      if (l.rows > INT_MAX || l.cols > INT_MAX)
        throw std::invalid_argument("compression: tensor '" + l.tensor.name + "' is too large for PowerSGD");
      const size_t r = std::min<size_t>({static_cast<size_t>(s.powersgd_rank), l.rows, l.cols});
      p_size = std::max(p_size, r * l.rows);
      q_size = std::max(q_size, r * l.cols);
      matrix = std::max(matrix, l.tensor.size);
    }
    p_ = gpu::Buffer<T>(ops, p_size);
    p_worker_ = gpu::Buffer<T>(ops, p_size);
    q_worker_ = gpu::Buffer<T>(ops, q_size);
    diff_ = gpu::Buffer<T>(ops, matrix);
  }

  bool compresses(const TensorLayout& layout) const override { return layout.is_matrix(); }
  bool combines_inputs() const override { return true; }

  std::vector<WireOp> input_messages(size_t t) const override {
    const TensorLayout& l = this->layouts_[t];
    const uint64_t r = rank_of(t);
    return {{t, Collective::Allreduce, kFp32Bytes * l.rows * r}, {t, Collective::Allreduce, kFp32Bytes * l.cols * r}};
  }

  WireOp encode(int rank, size_t t, T* x, int64_t step, CompressionStats&) override {
    const TensorLayout& l = this->layouts_[t];
    const int r = rank_of(t);
    T* qt = warm_q(rank, t, step);
    const ConstMatrixView<T> m(x, static_cast<int>(l.rows), static_cast<int>(l.cols));
    this->ops_.gemm(Transpose::No, Transpose::Yes, T(1), q_view(qt, t), m, T(0), p_view(p_.data(), t));
    orthonormalise_rows(p_.data(), r, l.rows);
    this->ops_.gemm(Transpose::No, Transpose::No, T(1), p_view(p_.data(), t), m, T(0), q_view(qt, t));
    decode(t, qt, x);
    return {t, Collective::AllGather, kFp32Bytes * (l.rows + l.cols) * static_cast<uint64_t>(r)};
  }

  std::vector<double> combine_inputs(size_t t, const std::vector<T*>& inputs, int64_t step, T* mean) override {
    gpu::Ops<T>& ops = this->ops_;
    const TensorLayout& l = this->layouts_[t];
    const int r = rank_of(t);
    const size_t p_count = static_cast<size_t>(r) * l.rows, q_count = static_cast<size_t>(r) * l.cols;
    const T inverse = T(1) / static_cast<T>(inputs.size());
    T* qt = warm_q(kGroupSlot, t, step);
    // P̄ = (Σ_i M_i Q) / N in rank order: the first allreduce.
    for (size_t i = 0; i < inputs.size(); ++i) {
      T* target = i == 0 ? p_.data() : p_worker_.data();
      ops.gemm(Transpose::No, Transpose::Yes, T(1), q_view(qt, t), matrix(inputs[i], t), T(0), p_view(target, t));
      if (i > 0) ops.axpy(T(1), target, p_.data(), p_count);
    }
    if (inputs.size() > 1) ops.scale(inverse, p_.data(), p_count);
    orthonormalise_rows(p_.data(), r, l.rows);
    // Q̄ = (Σ_i M_iᵀ P̂) / N: the second allreduce, and the next step's warm start.
    for (size_t i = 0; i < inputs.size(); ++i) {
      T* target = i == 0 ? qt : q_worker_.data();
      ops.gemm(Transpose::No, Transpose::No, T(1), p_view(p_.data(), t), matrix(inputs[i], t), T(0),
               q_view(target, t));
      if (i > 0) ops.axpy(T(1), target, qt, q_count);
    }
    if (inputs.size() > 1) ops.scale(inverse, qt, q_count);
    decode(t, qt, mean);
    std::vector<double> errors;
    for (T* x : inputs) {
      ops.copy(diff_.data(), x, l.tensor.size);
      ops.axpy(T(-1), mean, diff_.data(), l.tensor.size);
      errors.push_back(ops.sum_squares(diff_.data(), l.tensor.size));
      ops.copy(x, mean, l.tensor.size);
    }
    return errors;
  }

 private:
  static constexpr int kGroupSlot = -1;  // the group's Q; a worker alone uses its rank

  int rank_of(size_t t) const {
    const TensorLayout& l = this->layouts_[t];
    return static_cast<int>(std::min<size_t>({static_cast<size_t>(this->settings_.powersgd_rank), l.rows, l.cols}));
  }
  ConstMatrixView<T> matrix(const T* x, size_t t) const {
    return {x, static_cast<int>(this->layouts_[t].rows), static_cast<int>(this->layouts_[t].cols)};
  }
  MatrixView<T> p_view(T* p, size_t t) const { return {p, rank_of(t), static_cast<int>(this->layouts_[t].rows)}; }
  MatrixView<T> q_view(T* q, size_t t) const { return {q, rank_of(t), static_cast<int>(this->layouts_[t].cols)}; }

  // out (m × n) = P̂ Qᵀ = (P̂ᵀ)ᵀ Qᵀ
  void decode(size_t t, const T* qt, T* out) {
    const TensorLayout& l = this->layouts_[t];
    this->ops_.gemm(Transpose::Yes, Transpose::No, T(1), ConstMatrixView<T>(p_view(p_.data(), t)),
                    ConstMatrixView<T>(qt, rank_of(t), static_cast<int>(l.cols)), T(0),
                    MatrixView<T>{out, static_cast<int>(l.rows), static_cast<int>(l.cols)});
  }

  // Qᵀ of `slot` for tensor t: created on first use, its zero rows redrawn.
  T* warm_q(int slot, size_t t, int64_t step) {
    std::vector<gpu::Buffer<T>>& per_tensor = q_[slot];
    if (per_tensor.empty()) per_tensor.resize(this->layouts_.size());
    gpu::Buffer<T>& q = per_tensor[t];
    const size_t n = this->layouts_[t].cols;
    const int r = rank_of(t);
    const uint64_t seed = this->settings_.seed;
    if (q.empty()) {
      q = gpu::Buffer<T>(this->ops_, static_cast<size_t>(r) * n);
      Rng rng(stream_seed(seed, "powersgd-q", 0, 0, t));
      std::vector<T> init(q.size());
      for (T& v : init) v = static_cast<T>(rng.normal());
      this->ops_.upload(q.data(), init.data(), init.size());
    }
    for (int j = 0; j < r; ++j) {
      T* row = q.data() + static_cast<size_t>(j) * n;
      if (this->ops_.sum_squares(row, n) != 0.0) continue;
      Rng rng(stream_seed(seed, "powersgd-q-redraw", static_cast<uint64_t>(j), step, t));
      std::vector<T> fresh(n);
      for (T& v : fresh) v = static_cast<T>(rng.normal());
      this->ops_.upload(row, fresh.data(), n);
    }
    return q.data();
  }

  // Orthonormalises the `count` rows (each `length` long) of a row-major block, in place.
  void orthonormalise_rows(T* rows, int count, size_t length) {
    gpu::Ops<T>& ops = this->ops_;
    const double dependent = 1000.0 * std::numeric_limits<T>::epsilon();
    for (int j = 0; j < count; ++j) {
      T* row = rows + static_cast<size_t>(j) * length;
      const double before = ops.sum_squares(row, length);
      for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < j; ++i) {
          const T* earlier = rows + static_cast<size_t>(i) * length;
          ops.axpy(static_cast<T>(-ops.dot(earlier, row, length)), earlier, row, length);
        }
      const double after = ops.sum_squares(row, length);
      if (std::isnan(after)) continue;  // a non-finite gradient: let it reach the receivers
      if (!(after > dependent * dependent * before))
        ops.fill(row, length, T(0));
      else
        ops.scale(static_cast<T>(1.0 / std::sqrt(after)), row, length);
    }
  }

  std::map<int, std::vector<gpu::Buffer<T>>> q_;  // Qᵀ by slot, then tensor
  gpu::Buffer<T> p_;                              // P (then P̂), transposed
  gpu::Buffer<T> p_worker_;                       // one worker's P before it joins the sum
  gpu::Buffer<T> q_worker_;
  gpu::Buffer<T> diff_;
};

}  // namespace

template <class T>
std::unique_ptr<Codec<T>> make_powersgd_codec(gpu::Ops<T>& ops, const std::vector<TensorLayout>& layouts,
                                              const CompressionSettings& settings) {
  return std::make_unique<PowerSgdCodec<T>>(ops, layouts, settings);
}

template std::unique_ptr<Codec<float>> make_powersgd_codec(gpu::Ops<float>&, const std::vector<TensorLayout>&,
                                                           const CompressionSettings&);
template std::unique_ptr<Codec<double>> make_powersgd_codec(gpu::Ops<double>&, const std::vector<TensorLayout>&,
                                                            const CompressionSettings&);

CompressorDescriptor describe_powersgd() {
  using S = CompressionSetting;
  return {CompressorKind::PowerSgd, "powersgd", CompressorFamily::LowRank,
          compressed_settings({S::PowerSgdRank, S::Seed}), &make_powersgd_codec<float>,
          &make_powersgd_codec<double>};
}

}  // namespace dtsim::models::compression_detail
