// The order in which training samples are visited: every epoch is a fresh seeded permutation, cut into
// consecutive global batches. Synchronous strategies cut each global batch into per-worker shards, so
// K workers see exactly the samples one worker with the K-times larger batch would see.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dtsim::models {

class BatchSchedule {
 public:
  // The last partial batch of an epoch is dropped, as with drop_last=True in PyTorch.
  BatchSchedule(int num_samples, int global_batch, uint64_t seed);

  int steps_per_epoch() const { return steps_per_epoch_; }
  int global_batch() const { return global_batch_; }

  // Sample indices of global step `step` (0-based), from position `offset` within the global batch.
  const int32_t* batch(int64_t step, int offset = 0);

 private:
  int num_samples_;
  int global_batch_;
  int steps_per_epoch_;
  uint64_t seed_;
  int64_t epoch_ = -1;
  std::vector<int32_t> order_;
};

// Mini-batches drawn from one worker's own shard: the shard is visited in a fresh seeded permutation each
// pass, and a batch that runs past the end of a pass continues into the next one, so shards smaller than
// a batch (lognormal or Dirichlet skew) still work.
class ShardSampler {
 public:
  ShardSampler(std::vector<int32_t> shard, uint64_t seed, uint64_t stream);

  // Writes the next `batch` sample indices.
  void next(int batch, int32_t* out);
  size_t shard_size() const { return shard_.size(); }

 private:
  void reshuffle();

  std::vector<int32_t> shard_;
  std::vector<int32_t> order_;
  uint64_t seed_;
  uint64_t stream_;
  int64_t pass_ = -1;
  size_t position_ = 0;
};

}  // namespace dtsim::models
