// ZeRO-3's weight gathers. With the weights sharded over the workers, each unit of layers (runs of a gradient
// bucket's layers of at least sync.bucket_size of weights, and likewise the frozen layers after the last
// bucket) is all-gathered before its forward and again before its backward, on a communication stream of its
// own and `ahead` units ahead of the compute (sync.prefetch_units; 1 as PyTorch FSDP prefetches). The gradients still
// go bucket by bucket to BucketStreams.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/strategies/sync/buckets.hpp"

namespace dtsim::sim {

// The units of a step, in backward order: each bucket's segments, then the segments after the last bucket's,
// cut into runs of at least `unit_bytes` of weights (the last run of each may be smaller), as the buckets are
// cut by gradient bytes. With every weight trained a unit is its bucket; with few trained (LoRA), a bucket
// spans many layers and would otherwise be gathered whole (a LLaMA-7B bucket held all 13.5 GB of weights).
// `segment_weight_bytes` has an entry per segment (those after the buckets' included): the bytes of every
// weight, frozen or not, in that segment's layers. A unit's size is its weights' bytes.
std::vector<Bucket> weight_units(const std::vector<Bucket>& buckets, const std::vector<double>& segment_weight_bytes,
                                 double unit_bytes);

class WeightGathers {
 public:
  WeightGathers(const Platform& platform, std::vector<Bucket> units, MakeCollective make, int ahead);

  simgrid::s4u::ActorPtr start(int rank, const std::string& name) { return streams_.start(rank, name); }
  int units() const { return streams_.size(); }
  const Bucket& unit(int u) const { return streams_.bucket(u); }
  // The sum of `of(segment)` over unit u's segments (its forward work, say).
  template <class Of>
  double over_segments(int u, Of of) const {
    double sum = 0;
    for (size_t i = unit(u).first_segment; i < unit(u).first_segment + unit(u).segments; ++i) sum += of(i);
    return sum;
  }

  // The forward pass: units from last to first, `compute(u)` once unit u's weights are gathered. Returns
  // the simulated seconds spent waiting for gathers (exposed communication).
  double forward(int rank, int64_t step, const std::function<void(int unit)>& compute);
  // Call before the backward of unit u = 0, 1, … (in that order): returns once its weights are gathered,
  // the next `ahead` units' gathers queued, with the seconds it waited.
  double before_backward(int rank, int unit, int64_t step);
  // The backward pass over segments [first, first + count) (a bucket's, or the tail's), unit by unit from
  // `next_unit` (advanced past them): each unit's gather, then `compute(flops)` of its segments
  // (`segment_flops(i)` each). A range that is a single unit computes `whole` at once, as without units.
  // Returns the seconds waited for gathers.
  double backward_over(int rank, int64_t step, size_t first, size_t count, double whole, int& next_unit,
                       const std::function<double(size_t)>& segment_flops, const std::function<void(double)>& compute);

  bool can_stand_in_for_all() const { return streams_.can_stand_in_for_all(); }
  void stand_in_for_all() { streams_.stand_in_for_all(); }
  uint64_t bytes_sent() const { return streams_.bytes_sent(); }
  uint64_t bytes_per_step() const { return 2 * streams_.bytes_per_step(); }  // each unit twice

 private:
  double wait_for(int rank, int count);  // the seconds until the first `count` gathers are done
  BucketStreams streams_;
  int ahead_;                       // units gathered ahead of the one computing
  std::vector<int> backward_base_;  // per rank: gathers handed before its current backward pass
};

}  // namespace dtsim::sim
