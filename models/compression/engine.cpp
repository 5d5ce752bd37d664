// What every compressor shares: error feedback, start_step, the layer filter, the statistics, and the group
// protocol (contribute each rank, then combine in rank order). The families only say how a tensor is encoded
// (codec.hpp).
#include <algorithm>
#include <stdexcept>

#include "models/compression/codec.hpp"

namespace dtsim::models {
namespace compression_detail {

template <class T>
void Codec<T>::average(const std::vector<const T*>& decoded, size_t count, T* mean) {
  ops_.copy(mean, decoded[0], count);
  for (size_t i = 1; i < decoded.size(); ++i) ops_.axpy(T(1), decoded[i], mean, count);
  if (decoded.size() > 1) ops_.scale(T(1) / static_cast<T>(decoded.size()), mean, count);
}

template <class T>
void Codec<T>::combine_decoded(size_t t, const std::vector<const T*>& decoded, T* mean) {
  average(decoded, size(t), mean);
}

template <class T>
std::vector<T>& Codec<T>::host_copy(const T* x, size_t count) {
  host_.resize(count);
  ops_.download(host_.data(), x, count);
  return host_;
}

template <class T>
void Codec<T>::upload_host(T* x, size_t count) {
  ops_.upload(x, host_.data(), count);
}

namespace {

template <class T>
std::unique_ptr<Codec<T>> make_codec(gpu::Ops<T>& ops, const std::vector<TensorLayout>& layouts,
                                     const CompressionSettings& s) {
  return compressor_descriptor(s.kind).factory<T>()(ops, layouts, s);
}

// The layouts must tile the parameter vector in order, so that every value is sent exactly once.
void check_tiling(const std::vector<TensorLayout>& layouts, size_t num_params) {
  size_t end = 0;
  for (const TensorLayout& l : layouts) {
    const ParamTensor& t = l.tensor;
    if (t.offset != end)
      throw std::invalid_argument("compression: tensor '" + t.name + "' starts at " + std::to_string(t.offset) +
                                  " but the previous one ends at " + std::to_string(end) +
                                  " (layouts must tile the parameter vector in order)");
    if (l.rows * l.cols != (l.is_matrix() ? t.size : 0))
      throw std::invalid_argument("compression: tensor '" + t.name + "' has " + std::to_string(t.size) +
                                  " values but a " + std::to_string(l.rows) + " x " + std::to_string(l.cols) +
                                  " matrix shape");
    end += t.size;
  }
  if (end != num_params)
    throw std::invalid_argument("compression: the layouts cover " + std::to_string(end) +
                                " values but the vector has " + std::to_string(num_params));
}

}  // namespace

// How one tensor travels in a given step.
enum class Route { Dense, Encoded, Deferred };

template <class T>
class Engine {
 public:
  Engine(gpu::Ops<T>& ops, std::vector<TensorLayout> layouts, size_t num_params, const CompressionSettings& settings,
         int ranks)
      : ops_(ops), layouts_(std::move(layouts)), settings_(settings), num_params_(num_params) {
    validate(settings_);
    check_tiling(layouts_, num_params_);
    if (ranks < 1) throw std::invalid_argument("compression: world_size must be at least 1");
    codec_ = make_codec(ops_, layouts_, settings_);
    if (settings_.error_feedback) {
      for (int r = 0; r < ranks; ++r) {
        residuals_.emplace_back(ops_, num_params_);
        ops_.fill(residuals_.back().data(), num_params_, T(0));
      }
    }
    size_t largest = 0;
    for (const TensorLayout& l : layouts_) largest = std::max(largest, l.tensor.size);
    if (!settings_.error_feedback) scratch_ = gpu::Buffer<T>(ops_, largest);
    if (settings_.momentum_correction > 0.0) {
      for (int r = 0; r < ranks; ++r) {
        momenta_.emplace_back(ops_, num_params_);
        ops_.fill(momenta_.back().data(), num_params_, T(0));
      }
    }
    pending_.resize(static_cast<size_t>(ranks));
  }

  Route route(size_t t, int64_t step) const {
    const TensorLayout& l = layouts_[t];
    if (step < settings_.start_step || l.tensor.size == 0 || l.tensor.size < settings_.min_tensor_size ||
        !codec_->compresses(l))
      return Route::Dense;
    return codec_->combines_inputs() ? Route::Deferred : Route::Encoded;
  }

  // One worker's pass over its tensors: encodes what can be encoded alone, prepares the rest for the group.
  // `slot` indexes the residuals; `rank` names the worker to the codec (its random streams and its state).
  std::vector<WireOp> submit(size_t slot, int rank, T* grad, int64_t step, bool group, CompressionStats& stats) {
    std::vector<WireOp> wire;
    stats = {};
    stats.dense_bytes = kFp32Bytes * num_params_;
    for (size_t t = 0; t < layouts_.size(); ++t) {
      const size_t off = layouts_[t].tensor.offset, n = layouts_[t].tensor.size;
      if (n == 0) continue;
      T* x = grad + off;
      Route r = route(t, step);
      if (r == Route::Deferred && !group) r = Route::Encoded;  // a worker alone runs the codec's own algorithm
      T* u = momentum(slot, off);
      if (u) {  // u = βu + g, and u is what the worker sends or accumulates
        ops_.scale(static_cast<T>(settings_.momentum_correction), u, n);
        ops_.axpy(T(1), x, u, n);
        ops_.copy(x, u, n);
      }
      if (r == Route::Dense) {
        stats.input_sum_squares += ops_.sum_squares(x, n);
        wire.push_back({t, Collective::Allreduce, kFp32Bytes * n});
        continue;
      }
      T* e = residual(slot, off);
      if (e) {  // x = g + e, kept in the residual buffer until the transmitted part is subtracted
        ops_.axpy(T(1), x, e, n);
        ops_.copy(x, e, n);
      }
      stats.input_sum_squares += ops_.sum_squares(x, n);
      if (r == Route::Deferred) {
        for (WireOp op : codec_->input_messages(t)) wire.push_back(op);
        continue;
      }
      if (!e) ops_.copy(scratch_.data(), x, n);  // keep x to measure the error
      wire.push_back(codec_->encode(rank, t, x, step, stats));
      T* diff = e ? e : scratch_.data();
      ops_.axpy(T(-1), x, diff, n);  // x − C(x): the new residual
      stats.error_sum_squares += ops_.sum_squares(diff, n);
      if (u) mask_sent(x, u, n);
    }
    for (const WireOp& op : wire) stats.wire_bytes += op.bytes_per_worker;
    return wire;
  }

  std::vector<WireOp> contribute(int rank, T* grad, int64_t step) {
    if (rank < 0 || static_cast<size_t>(rank) >= pending_.size())
      throw std::invalid_argument("compression: rank " + std::to_string(rank) + " is outside the group of " +
                                  std::to_string(pending_.size()));
    Pending& p = pending_[static_cast<size_t>(rank)];
    if (p.grad) throw std::invalid_argument("compression: rank " + std::to_string(rank) + " contributed twice");
    if (contributions_ > 0 && step != step_)
      throw std::invalid_argument("compression: rank " + std::to_string(rank) + " contributed to step " +
                                  std::to_string(step) + " while step " + std::to_string(step_) +
                                  " is in progress");
    step_ = step;
    ++contributions_;
    p.grad = grad;
    p.wire = submit(static_cast<size_t>(rank), rank, grad, step, true, p.stats);
    return p.wire;
  }

  GroupResult combine(T* mean) {
    if (contributions_ == 0) throw std::logic_error("compression: combine() with no contribution");
    GroupResult result;
    std::vector<T*> grads;
    for (size_t r = 0; r < pending_.size(); ++r) {
      if (!pending_[r].grad) continue;
      result.ranks.push_back(static_cast<int>(r));
      grads.push_back(pending_[r].grad);
    }
    for (size_t t = 0; t < layouts_.size(); ++t) {
      const size_t off = layouts_[t].tensor.offset, n = layouts_[t].tensor.size;
      if (n == 0) continue;
      std::vector<T*> xs;
      for (T* g : grads) xs.push_back(g + off);
      const Route r = route(t, step_);
      if (r == Route::Deferred) {
        const std::vector<double> errors = codec_->combine_inputs(t, xs, step_, mean + off);
        for (size_t i = 0; i < xs.size(); ++i) {
          pending_[static_cast<size_t>(result.ranks[i])].stats.error_sum_squares += errors[i];
          if (T* e = residual(static_cast<size_t>(result.ranks[i]), off)) ops_.axpy(T(-1), xs[i], e, n);
        }
      } else {
        const std::vector<const T*> decoded(xs.begin(), xs.end());
        if (r == Route::Dense)
          plain_average(decoded, n, mean + off);
        else
          codec_->combine_decoded(t, decoded, mean + off);
      }
    }
    // Each message's bytes per worker: the largest contribution (all-gathers pad to it).
    for (const int rank : result.ranks) {
      const Pending& p = pending_[static_cast<size_t>(rank)];
      if (result.wire.empty()) result.wire = p.wire;
      for (size_t i = 0; i < p.wire.size(); ++i)
        result.wire[i].bytes_per_worker = std::max(result.wire[i].bytes_per_worker, p.wire[i].bytes_per_worker);
      result.workers.push_back(p.stats);
    }
    for (Pending& p : pending_) p = Pending{};
    contributions_ = 0;
    return result;
  }

  const T* residual_of(int rank) const {
    return settings_.error_feedback ? residuals_.at(static_cast<size_t>(rank)).data() : nullptr;
  }
  int ranks() const { return static_cast<int>(pending_.size()); }
  const CompressionSettings& settings() const { return settings_; }
  const std::vector<TensorLayout>& layouts() const { return layouts_; }

 private:
  struct Pending {
    T* grad = nullptr;
    std::vector<WireOp> wire;
    CompressionStats stats;
  };

  T* residual(size_t slot, size_t offset) {
    return settings_.error_feedback ? residuals_[slot].data() + offset : nullptr;
  }
  T* momentum(size_t slot, size_t offset) { return momenta_.empty() ? nullptr : momenta_[slot].data() + offset; }

  // Momentum factor masking: the momentum of every value that was sent (non-zero in the decoded message)
  // restarts from zero, as the residual did. Index work on host copies, like the sparsifiers' selection.
  void mask_sent(const T* sent, T* u, size_t n) {
    sent_host_.resize(n);
    momentum_host_.resize(n);
    ops_.download(sent_host_.data(), sent, n);
    ops_.download(momentum_host_.data(), u, n);
    for (size_t j = 0; j < n; ++j)
      if (sent_host_[j] != T(0)) momentum_host_[j] = T(0);
    ops_.upload(u, momentum_host_.data(), n);
  }

  // The uncompressed average, in the same order and arithmetic as the codecs' default.
  void plain_average(const std::vector<const T*>& xs, size_t n, T* mean) {
    ops_.copy(mean, xs[0], n);
    for (size_t i = 1; i < xs.size(); ++i) ops_.axpy(T(1), xs[i], mean, n);
    if (xs.size() > 1) ops_.scale(T(1) / static_cast<T>(xs.size()), mean, n);
  }

  gpu::Ops<T>& ops_;
  std::vector<TensorLayout> layouts_;
  CompressionSettings settings_;
  size_t num_params_;
  std::unique_ptr<Codec<T>> codec_;
  std::vector<gpu::Buffer<T>> residuals_;
  std::vector<gpu::Buffer<T>> momenta_;  // momentum correction: one u per worker
  std::vector<T> sent_host_, momentum_host_;
  gpu::Buffer<T> scratch_;
  std::vector<Pending> pending_;
  int64_t step_ = 0;
  int contributions_ = 0;
};

template class Codec<float>;
template class Codec<double>;

}  // namespace compression_detail

using compression_detail::Engine;

// ---- Compressor --------------------------------------------------------------------------------------------

template <class T>
Compressor<T>::Compressor(gpu::Ops<T>& ops, std::vector<TensorLayout> layouts, size_t num_params,
                          const CompressionSettings& settings, int rank)
    : engine_(std::make_unique<Engine<T>>(ops, std::move(layouts), num_params, settings, 1)), rank_(rank) {
  if (rank < 0) throw std::invalid_argument("compression: rank must be at least 0, got " + std::to_string(rank));
}

template <class T>
Compressor<T>::~Compressor() = default;
template <class T>
Compressor<T>::Compressor(Compressor&&) noexcept = default;
template <class T>
Compressor<T>& Compressor<T>::operator=(Compressor&&) noexcept = default;

template <class T>
CompressionResult Compressor<T>::compress(T* grad, int64_t step) {
  CompressionResult result;
  // The engine holds one state slot (index 0); the rank only names the worker's random streams.
  result.wire = engine_->submit(0, rank_, grad, step, false, result.stats);
  return result;
}

template <class T>
const T* Compressor<T>::residual() const { return engine_->residual_of(0); }
template <class T>
const CompressionSettings& Compressor<T>::settings() const { return engine_->settings(); }
template <class T>
const std::vector<TensorLayout>& Compressor<T>::layouts() const { return engine_->layouts(); }

// ---- GroupCompressor ---------------------------------------------------------------------------------------

template <class T>
GroupCompressor<T>::GroupCompressor(gpu::Ops<T>& ops, std::vector<TensorLayout> layouts, size_t num_params,
                                    const CompressionSettings& settings, int world_size)
    : engine_(std::make_unique<Engine<T>>(ops, std::move(layouts), num_params, settings, world_size)) {}

template <class T>
GroupCompressor<T>::~GroupCompressor() = default;
template <class T>
GroupCompressor<T>::GroupCompressor(GroupCompressor&&) noexcept = default;
template <class T>
GroupCompressor<T>& GroupCompressor<T>::operator=(GroupCompressor&&) noexcept = default;

template <class T>
std::vector<WireOp> GroupCompressor<T>::contribute(int rank, T* grad, int64_t step) {
  return engine_->contribute(rank, grad, step);
}

template <class T>
GroupResult GroupCompressor<T>::combine(T* mean) { return engine_->combine(mean); }

template <class T>
GroupResult GroupCompressor<T>::average(const std::vector<T*>& grads, int64_t step, T* mean) {
  if (grads.size() > static_cast<size_t>(engine_->ranks()))
    throw std::invalid_argument("compression: " + std::to_string(grads.size()) + " gradients for a group of " +
                                std::to_string(engine_->ranks()));
  for (size_t r = 0; r < grads.size(); ++r) engine_->contribute(static_cast<int>(r), grads[r], step);
  return engine_->combine(mean);
}

template <class T>
const T* GroupCompressor<T>::residual(int rank) const { return engine_->residual_of(rank); }
template <class T>
int GroupCompressor<T>::world_size() const { return engine_->ranks(); }
template <class T>
const CompressionSettings& GroupCompressor<T>::settings() const { return engine_->settings(); }
template <class T>
const std::vector<TensorLayout>& GroupCompressor<T>::layouts() const { return engine_->layouts(); }

template class Compressor<float>;
template class Compressor<double>;
template class GroupCompressor<float>;
template class GroupCompressor<double>;

}  // namespace dtsim::models
