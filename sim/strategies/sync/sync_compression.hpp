// Gradient compression inside synchronous data parallelism: each worker encodes its gradient as soon as it
// exists (models::GroupCompressor), the bucket streams put the encoding's real bytes on the wire with the
// collective the encoding allows, and the step's update uses the group's decoded combination.
//
// A bucket's messages in a step, from its tensors' WireOps (see models/compression/compression.hpp):
//   - the first message of every tensor forms phase 0, the second (PowerSGD's Q) phase 1, ...; phases run
//     one after the other, as PowerSGD's P allreduce must finish before Q can be computed;
//   - within a phase, the allreduced tensors travel as one allreduce of Σ bytes, then the all-gathered ones
//     as one all-gather of N × Σ bytes (each worker's part padded to the largest worker's, as an all-gather
//     of equal parts must: only DGC's sampled top-k has sizes that differ between workers).
// An all-gather cannot start before every worker's size is known; a stream that reaches a bucket before the
// slowest worker has encoded its gradient waits for it (in simulated time), which costs nothing extra: the
// collective would wait for that worker anyway.
#pragma once

#include <simgrid/s4u.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "models/compression/compression.hpp"
#include "sim/strategies/sync/buckets.hpp"
#include "sim/strategies/recorder.hpp"
#include "sim/strategies/training.hpp"

namespace dtsim::sim {

class SyncGradientCompression {
 public:
  // For `workers` ranks, with the run's [compression] settings (start_epoch resolved with steps_per_epoch).
  SyncGradientCompression(const TrainingContext& ctx, int workers);

  // Encodes rank's gradient for `step` (grad must stay untouched until combine()); `participants` is how
  // many ranks take part in the step. Wakes the streams once the last participant has encoded.
  void contribute(int rank, float* grad, int64_t step, int participants);
  // Bucket b's messages in `step`, once every participant has encoded (blocks the calling actor until then).
  std::vector<BucketMessage> messages(const Bucket& bucket, int64_t step);
  // Writes the step's combined gradient into `mean`, hands each worker's statistics to the recorder, and
  // forgets the steps before it.
  void combine(int64_t step, float* mean, TrainingRecorder& recorder);

 private:
  struct StepWire {
    std::vector<models::WireOp> largest;  // per message: the largest bytes_per_worker any worker sent
    int contributed = 0;
    int participants = 0;
    std::map<size_t, std::vector<BucketMessage>> by_bucket;  // by bucket offset, built once the step is known
    bool complete() const { return contributed == participants; }
  };

  // Proxy mode (workload.proxy): the buckets are the workload's, the tensors the small model's. A bucket then
  // carries the small model's whole compressed step at its share of the workload's values.
  bool proxied_ = false;
  size_t num_params_ = 0;
  std::vector<models::TensorLayout> layouts_;
  models::GroupCompressor<float> group_;
  std::map<int64_t, StepWire> steps_;
  simgrid::s4u::MutexPtr mutex_ = simgrid::s4u::Mutex::create();
  simgrid::s4u::ConditionVariablePtr known_ = simgrid::s4u::ConditionVariable::create();
};

}  // namespace dtsim::sim
