#include "batch_schedule.hpp"

#include <numeric>
#include <stdexcept>

#include "models/random.hpp"

namespace dtsim::models {

BatchSchedule::BatchSchedule(int num_samples, int global_batch, uint64_t seed)
    : num_samples_(num_samples), global_batch_(global_batch), seed_(seed) {
  if (global_batch <= 0 || global_batch > num_samples)
    throw std::invalid_argument("global batch must be between 1 and the number of training samples");
  steps_per_epoch_ = num_samples / global_batch;
}

const int32_t* BatchSchedule::batch(int64_t step, int offset) {
  const int64_t epoch = step / steps_per_epoch_;
  if (epoch != epoch_) {
    order_.resize(num_samples_);
    std::iota(order_.begin(), order_.end(), 0);
    Rng rng(seed_, "data-order", static_cast<uint64_t>(epoch));
    rng.shuffle(order_);
    epoch_ = epoch;
  }
  const int64_t position = step % steps_per_epoch_;
  return order_.data() + position * global_batch_ + offset;
}

ShardSampler::ShardSampler(std::vector<int32_t> shard, uint64_t seed, uint64_t stream)
    : shard_(std::move(shard)), seed_(seed), stream_(stream) {
  if (shard_.empty()) throw std::invalid_argument("a worker's shard holds no samples");
  reshuffle();
}

void ShardSampler::reshuffle() {
  ++pass_;
  order_ = shard_;
  // One stream per (worker, pass): what a worker draws never depends on the other workers.
  Rng rng(derive_seed(seed_, "shard-order", stream_), "pass", static_cast<uint64_t>(pass_));
  rng.shuffle(order_);
  position_ = 0;
}

void ShardSampler::next(int batch, int32_t* out) {
  for (int i = 0; i < batch; ++i) {
    if (position_ == order_.size()) reshuffle();
    out[i] = order_[position_++];
  }
}

}  // namespace dtsim::models
