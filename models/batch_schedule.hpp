// The order in which training samples are visited: every epoch is a fresh seeded permutation, cut into
// consecutive global batches. Synchronous strategies cut each global batch into per-worker shards, so
// K workers see exactly the samples one worker with the K-times larger batch would see.
#pragma once

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

}  // namespace dtsim::models
