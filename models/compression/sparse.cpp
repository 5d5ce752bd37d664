// Sparsification: "topk" (exact, or with DGC's sampled threshold) and "randomk". The selection is index work,
// done on a host copy of the tensor (gpu::Ops has no selection op); the kept values travel at fp32, which is T
// in the simulator.
//
// Ranking: by magnitude, ties broken by the lower index, so the selection is a strict total order and
// deterministic. NaN ranks above everything, so that a non-finite gradient reaches the receivers rather than
// being silently dropped.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>

#include "models/compression/codec.hpp"

namespace dtsim::models::compression_detail {
namespace {

template <class T>
double magnitude(T v) {
  return std::isnan(v) ? std::numeric_limits<double>::infinity() : std::fabs(static_cast<double>(v));
}

template <class T>
class SparseCodec final : public Codec<T> {
 public:
  using Codec<T>::Codec;

  WireOp encode(int rank, size_t t, T* x, int64_t step, CompressionStats& stats) override {
    const size_t n = this->size(t);
    if (n > std::numeric_limits<uint32_t>::max())
      throw std::invalid_argument("compression: tensor '" + this->layouts_[t].tensor.name +
                                  "' is too large for sparsification (more than 2^32 values)");
    const uint64_t k = kept_count(this->settings_.ratio, n);
    std::vector<T>& v = this->host_copy(x, n);
    keep_.assign(n, 0);
    double scale = 1.0;
    WireOp op{t, Collective::AllGather, 0};
    const IndexEncoding encoding = this->settings_.indices;
    if (this->settings_.kind == CompressorKind::TopK) {
      keys_.resize(n);
      for (size_t j = 0; j < n; ++j) keys_[j] = magnitude(v[j]);
      if (this->settings_.sampled_threshold) {
        const uint64_t sent = select_by_sampled_threshold(k, Rng(stream_seed(this->settings_.seed, "dgc-sample",
                                                                             static_cast<uint64_t>(rank), step, t)),
                                                          stats);
        op.bytes_per_worker = sparse_message_bytes(sent, n, encoding, true);
      } else {
        candidates_.resize(n);
        for (size_t j = 0; j < n; ++j) candidates_[j] = static_cast<uint32_t>(j);
        keep_largest(k);
        op.bytes_per_worker = sparse_message_bytes(k, n, encoding, false);
      }
    } else {
      // Shared indices come from a stream without the worker in it: every worker draws the same ones, so the
      // values line up and can be allreduced; the receivers regenerate the indices, which are not sent.
      const bool shared = this->settings_.shared_indices;
      choose_random_subset(n, k, Rng(stream_seed(this->settings_.seed, shared ? "random-k-shared" : "random-k",
                                                 shared ? 0 : static_cast<uint64_t>(rank), step, t)));
      if (this->settings_.unbiased) scale = static_cast<double>(n) / static_cast<double>(k);
      op.collective = shared ? Collective::Allreduce : Collective::AllGather;
      op.bytes_per_worker = shared ? kFp32Bytes * k : sparse_message_bytes(k, n, encoding, false);
    }
    for (size_t j = 0; j < n; ++j)
      v[j] = keep_[j] ? (scale == 1.0 ? v[j] : static_cast<T>(static_cast<double>(v[j]) * scale)) : T(0);
    this->upload_host(x, n);
    return op;
  }

 private:
  // Marks the k largest keys among candidates_ (ascending indices), ties going to the lower index. Selecting
  // on a copy of the keys finds the k-th largest value; one pass in index order then keeps everything above
  // it and as many of its ties as are needed. (Ranking the indices themselves, with a comparison that looks
  // the keys up, costs several times more: every comparison is a cache miss.)
  void keep_largest(uint64_t k) {
    if (k >= candidates_.size()) {
      for (const uint32_t j : candidates_) keep_[j] = 1;
      return;
    }
    if (k == 0) return;
    // Keys are non-negative doubles, whose bit patterns order like the values: a histogram of their top 16
    // bits finds the bucket that holds the k-th largest, and only that bucket needs a selection.
    const auto bucket_of = [](double key) {
      uint64_t bits;
      std::memcpy(&bits, &key, sizeof bits);
      return static_cast<size_t>(bits >> 48);
    };
    // (Small tensors skip the histogram, which would cost more than it saves.)
    uint64_t larger = 0;  // keys in the buckets above the one selected from
    selected_.clear();
    if (candidates_.size() < kHistogramFrom) {
      for (const uint32_t j : candidates_) selected_.push_back(keys_[j]);
    } else {
      histogram_.assign(size_t{1} << 16, 0);
      for (const uint32_t j : candidates_) ++histogram_[bucket_of(keys_[j])];
      size_t bucket = histogram_.size() - 1;
      while (larger + histogram_[bucket] < k) larger += histogram_[bucket--];
      for (const uint32_t j : candidates_)
        if (bucket_of(keys_[j]) == bucket) selected_.push_back(keys_[j]);
    }
    const uint64_t rank = k - larger;  // the k-th largest is the rank-th largest of its bucket
    std::nth_element(selected_.begin(), selected_.begin() + static_cast<std::ptrdiff_t>(rank - 1), selected_.end(),
                     std::greater<double>());
    const double kth = selected_[rank - 1];
    uint64_t above = 0;
    for (const uint32_t j : candidates_) above += keys_[j] > kth ? 1 : 0;
    uint64_t ties = k - above;
    for (const uint32_t j : candidates_) {
      if (keys_[j] > kth) {
        keep_[j] = 1;
      } else if (keys_[j] == kth && ties > 0) {
        keep_[j] = 1;
        --ties;
      }
    }
  }

  // Deep Gradient Compression's threshold (Lin et al. 2018, §3): estimate the magnitude of the k-th largest
  // value from a random sample, send everything at or above it. Returns the number of values sent.
  uint64_t select_by_sampled_threshold(uint64_t k, Rng rng, CompressionStats& stats) {
    const size_t n = keys_.size();
    const size_t m = std::max((n + 99) / 100, std::min<size_t>(n, 1000));
    sample_.resize(m);
    for (size_t i = 0; i < m; ++i) sample_[i] = keys_[rng.below(n)];
    const size_t rank_in_sample =
        std::min<size_t>(m, std::max<size_t>(1, static_cast<size_t>(std::ceil(this->settings_.ratio * m))));
    std::nth_element(sample_.begin(), sample_.begin() + static_cast<std::ptrdiff_t>(rank_in_sample - 1),
                     sample_.end(), std::greater<double>());
    const double threshold = sample_[rank_in_sample - 1];
    candidates_.clear();
    for (size_t j = 0; j < n; ++j)
      if (keys_[j] >= threshold) candidates_.push_back(static_cast<uint32_t>(j));
    const uint64_t count = candidates_.size();
    if (count > 2 * k) {  // threshold too low: the exact top-k of what passed (it contains the tensor's top-k)
      ++stats.threshold_fallbacks;
      keep_largest(k);
      return k;
    }
    if (2 * count < k) {  // threshold too high: the sample missed the tail
      ++stats.threshold_fallbacks;
      candidates_.resize(n);
      for (size_t j = 0; j < n; ++j) candidates_[j] = static_cast<uint32_t>(j);
      keep_largest(k);
      return k;
    }
    for (const uint32_t j : candidates_) keep_[j] = 1;
    return count;
  }

  // A uniformly random k-subset of [0, n) by Floyd's algorithm: for j = n−k … n−1 draw t in [0, j] and take t,
  // or j when t is already taken. k draws, whatever n.
  void choose_random_subset(size_t n, uint64_t k, Rng rng) {
    for (uint64_t j = n - k; j < n; ++j) {
      const uint64_t pick = rng.below(j + 1);
      keep_[keep_[pick] ? j : pick] = 1;
    }
  }

  std::vector<double> keys_;
  std::vector<double> sample_;
  std::vector<double> selected_;
  std::vector<uint32_t> histogram_;
  static constexpr size_t kHistogramFrom = 1 << 16;
  std::vector<uint32_t> candidates_;
  std::vector<char> keep_;
};

}  // namespace

template <class T>
std::unique_ptr<Codec<T>> make_sparse_codec(gpu::Ops<T>& ops, const std::vector<TensorLayout>& layouts,
                                            const CompressionSettings& settings) {
  return std::make_unique<SparseCodec<T>>(ops, layouts, settings);
}

template std::unique_ptr<Codec<float>> make_sparse_codec(gpu::Ops<float>&, const std::vector<TensorLayout>&,
                                                         const CompressionSettings&);
template std::unique_ptr<Codec<double>> make_sparse_codec(gpu::Ops<double>&, const std::vector<TensorLayout>&,
                                                          const CompressionSettings&);

// topk reads `seed` for DGC's sample only; randomk reads `indices` only without shared indices (which are not
// sent). Momentum correction is DGC's, for these two.
CompressorDescriptor describe_topk() {
  using S = CompressionSetting;
  return {CompressorKind::TopK, "topk", CompressorFamily::Sparsification,
          compressed_settings({S::Ratio, S::SampledThreshold, S::MomentumCorrection, S::Indices, S::Seed}),
          &make_sparse_codec<float>, &make_sparse_codec<double>};
}

CompressorDescriptor describe_randomk() {
  using S = CompressionSetting;
  return {CompressorKind::RandomK, "randomk", CompressorFamily::Sparsification,
          compressed_settings({S::Ratio, S::Unbiased, S::SharedIndices, S::MomentumCorrection, S::Indices, S::Seed}),
          &make_sparse_codec<float>, &make_sparse_codec<double>};
}

}  // namespace dtsim::models::compression_detail
