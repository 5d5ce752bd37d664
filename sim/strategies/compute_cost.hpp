// What a worker's computations cost in simulated time, charged as work on its host (FLOPs at the host's
// nominal speed, so that a slowed host, a straggler draw or a faster GPU group stretch or shrink it as they
// do any execution). With an objective that has per-layer cost figures (every built-in network) each layer
// takes the per-layer roofline of models/workload/compute_time.hpp on the worker's GPU: its FLOPs at the
// precision's peak × gpu.efficiency or its bytes at gpu.memory_bandwidth, whichever is longer, plus
// gpu.launch_overhead per kernel; the optimizer step is charged the same way. Without them (the
// closed-form quadratic) a gradient costs its FLOPs at the sustained rate and the update nothing.
#pragma once

#include <vector>

#include "models/objective.hpp"
#include "models/workload/compute_time.hpp"
#include "sim/config/numerics_setup.hpp"
#include "sim/config/run_config.hpp"

namespace dtsim::sim {

class ComputeCost {
 public:
  // With `proxy` (workload.proxy), the costs are that workload's on each GPU, set up by [workload] and
  // sync.zero_stage, whatever the objective computes: its gradient segments, not the objective's.
  ComputeCost(const RunConfig& config, const models::Objective<float>& objective,
              const models::Workload* proxy = nullptr);

  double forward(int rank) const { return of(rank).forward; }
  // ZeRO-3's units: the forward work of segment i's layers, and of the layers below the first trained one.
  // Empty without per-layer costs.
  double forward(int rank, size_t segment) const { return of(rank).forward_segments.at(segment); }
  double tail_forward(int rank) const { return of(rank).tail_forward; }
  // The bytes of every weight (frozen or not) in each segment's layers, then, if any, in the layers below the
  // first trained one: what ZeRO-3 gathers. Empty without per-layer costs.
  const std::vector<double>& segment_weight_bytes() const { return segment_weight_bytes_; }
  bool per_layer() const { return !segment_weight_bytes_.empty(); }
  // Backward work of segment i of segments(), and of the whole backward pass.
  double backward(int rank, size_t segment) const { return of(rank).backward.at(segment); }
  double backward(int rank) const { return of(rank).backward_total; }  // the segments and the tail
  // Backward work after the last segment's gradient is complete (none when the first layer trains).
  double tail(int rank) const { return of(rank).tail; }
  double gradient(int rank) const { return forward(rank) + backward(rank); }
  // The optimizer's update of the worker's replica once its gradient (or the average) is there.
  double update(int rank) const { return of(rank).update; }
  // The gradient segments buckets are made of: the objective's, or the proxied workload's trained layers.
  const std::vector<models::GradientSegment>& segments() const { return segments_; }
  // Proxy mode: the workload's gradient bytes per trained value and its trained weights' bytes (ZeRO's
  // all-gather); 0 otherwise (the objective's own values travel).
  double proxy_gradient_bytes() const { return proxy_gradient_bytes_; }
  double proxy_weight_bytes() const { return proxy_weight_bytes_; }
  bool proxied() const { return proxy_gradient_bytes_ > 0; }
  // Proxy mode for the strategies whose messages are slices of the model (async-ps's pushes and pulls,
  // federated learning's model and update): a message that carries `share` of the small model's values
  // costs that share of the workload's trained values, as gradients or as weights.
  uint64_t proxy_trained_values() const { return proxy_trained_values_; }
  // Proxy mode: the bytes a checkpoint of the workload holds (its trained weights' master copy and optimizer
  // state), which sync's restarts write and read back; 0 otherwise.
  double proxy_checkpoint_bytes() const { return proxy_checkpoint_bytes_; }
  uint64_t proxy_gradient_message(double share) const;
  uint64_t proxy_weight_message(double share) const;
  // A compressed message in a proxy run: the small model's compressor sent `small_bytes` for `small_values`
  // of its values; the workload's message for `workload_values` of its trained values is sent at the same
  // bytes per value (the compressors count values at 4 bytes, dense or not, whatever the model's width).
  static uint64_t proxy_compressed_message(uint64_t small_bytes, size_t small_values, double workload_values);

 private:
  struct Work {
    double forward = 0, backward_total = 0, update = 0, tail = 0, tail_forward = 0;
    std::vector<double> backward, forward_segments;
  };
  const Work& of(int rank) const { return works_[work_of_rank_.at(static_cast<size_t>(rank))]; }

  std::vector<Work> works_;        // one per kind of GPU in the cluster
  std::vector<int> work_of_rank_;  // index into works_
  std::vector<models::GradientSegment> segments_;
  std::vector<double> segment_weight_bytes_;
  double proxy_gradient_bytes_ = 0, proxy_weight_bytes_ = 0, proxy_checkpoint_bytes_ = 0;
  uint64_t proxy_trained_values_ = 0;
};

}  // namespace dtsim::sim
