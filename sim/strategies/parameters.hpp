// A parameter vector and everything that updates it: fp32 master weights, the rounded copy the forward pass
// reads (mixed precision), the optimizer, the learning-rate schedule and the loss scaler. Synchronous DP
// holds one; local SGD one per worker while they diverge; a parameter server one per shard of the model.
#pragma once

#include <memory>
#include <vector>

#include "gpu/buffer.hpp"
#include "models/loss_scaler.hpp"
#include "models/lr_schedule.hpp"
#include "models/mixed_precision.hpp"
#include "models/network.hpp"
#include "models/optimizer.hpp"
#include "sim/strategies/metrics.hpp"

namespace dtsim::sim {

struct TrainingContext;

// A contiguous run of whole parameter tensors of the flat vector: what one parameter-server shard owns.
// Whole tensors, because the layer-wise optimizers (LARS, LAMB) need a tensor's norm.
struct ParameterRange {
  size_t offset = 0;
  size_t size = 0;
  std::vector<models::ParamTensor> tensors;  // offsets relative to `offset`
};

class TrainableParameters {
 public:
  // Starts from the objective's seeded initialisation, or from `initial` (backend memory) when given.
  explicit TrainableParameters(const TrainingContext& ctx, const float* initial = nullptr);
  // Only `range` of the model, from the objective's seeded initialisation, with its own optimizer state,
  // schedule and loss scaler.
  TrainableParameters(const TrainingContext& ctx, const ParameterRange& range);

  size_t size() const { return master_.size(); }
  const float* master() const { return master_.data(); }
  float* master() { return master_.data(); }
  // What the forward pass reads: the master weights, or their rounded copy under reduced-precision weights.
  const float* forward() const { return working_.empty() ? master_.data() : working_.data(); }

  // The numerics a gradient at these parameters is computed with (formats, current loss scale).
  models::NumericsOptions numerics() const;
  double lr(int64_t step) const { return schedule_.lr(step); }

  // One update from an averaged gradient `grad` (loss-scaled, in the gradients' format; modified in place):
  // rounds it to that format, unscales it, skips the step when it is not finite (the loss scaler's rule),
  // else applies the optimizer with the scheduled rate × lr_factor. Returns whether the step was applied.
  bool apply(float* grad, int64_t step, double lr_factor = 1.0);
  // The same for a gradient computed with loss scale `grad_scale` rather than the current one (it was
  // computed a while ago, asynchronously, or arrives already unscaled with grad_scale 1).
  bool apply_scaled(float* grad, double grad_scale, int64_t step, double lr_factor = 1.0);

  // Overwrites the master weights (e.g. with a model average) and refreshes the working copy.
  void assign(const float* values);
  // Makes this a copy of `other`: weights, optimizer state and loss scale (saving or restoring a checkpoint).
  void copy_from(const TrainableParameters& other);
  // Bytes one gradient (or parameter) vector takes on the wire: its storage format's width.
  uint64_t wire_bytes() const;
  // What a checkpoint of this state holds: fp32 weights and the optimizer's state, 4 bytes a value.
  uint64_t checkpoint_bytes() const {
    return master_.size() * 4 * static_cast<uint64_t>(1 + optimizer_->state_values_per_param());
  }
  PrecisionOutcome precision_outcome() const;
  std::vector<float> download() const;

 private:
  void refresh_working();
  void finish_setup(const TrainingContext& ctx, const std::vector<models::ParamTensor>& tensors);

  gpu::Ops<float>& ops_;
  models::PrecisionSettings precision_;
  models::LrSchedule schedule_;
  models::LossScaler scaler_;
  std::unique_ptr<models::Optimizer<float>> optimizer_;
  gpu::Buffer<float> master_;
  gpu::Buffer<float> working_;
};

}  // namespace dtsim::sim
