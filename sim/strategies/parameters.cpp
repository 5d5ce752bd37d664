#include "sim/strategies/parameters.hpp"

#include "sim/config/numerics_setup.hpp"
#include "sim/strategies/training.hpp"

namespace dtsim::sim {

TrainableParameters::TrainableParameters(const TrainingContext& ctx, const float* initial)
    : ops_(ctx.ops),
      precision_(precision_settings(ctx.config())),
      schedule_(schedule_settings(ctx.config(), ctx.inputs.length)),
      scaler_(loss_scaler_settings(ctx.config())),
      master_(ctx.ops, ctx.objective.num_params()) {
  const size_t n = ctx.objective.num_params();
  if (initial) {
    ops_.copy(master_.data(), initial, n);
  } else {
    std::vector<float> init(n);
    ctx.objective.init_params(init.data(), ctx.config().model_seed());
    ops_.upload(master_.data(), init.data(), n);
  }
  finish_setup(ctx, ctx.objective.param_tensors());
}

TrainableParameters::TrainableParameters(const TrainingContext& ctx, const ParameterRange& range)
    : ops_(ctx.ops),
      precision_(precision_settings(ctx.config())),
      schedule_(schedule_settings(ctx.config(), ctx.inputs.length)),
      scaler_(loss_scaler_settings(ctx.config())),
      master_(ctx.ops, range.size) {
  std::vector<float> init(ctx.objective.num_params());
  ctx.objective.init_params(init.data(), ctx.config().model_seed());
  ops_.upload(master_.data(), init.data() + range.offset, range.size);
  finish_setup(ctx, range.tensors);
}

void TrainableParameters::finish_setup(const TrainingContext& ctx, const std::vector<models::ParamTensor>& tensors) {
  const size_t n = master_.size();
  optimizer_ = models::make_optimizer<float>(ops_, tensors, n, optimizer_settings(ctx.config()));
  if (precision_.weights != gpu::NumberFormat::Fp32) working_ = gpu::Buffer<float>(ops_, n);
  refresh_working();
}

models::NumericsOptions TrainableParameters::numerics() const {
  models::NumericsOptions n;
  n.activations = precision_.activations;
  n.gradients = precision_.gradients;
  n.loss_scale = scaler_.scale();
  return n;
}

bool TrainableParameters::apply(float* grad, int64_t step, double lr_factor) {
  return apply_scaled(grad, scaler_.scale(), step, lr_factor);
}

bool TrainableParameters::apply_scaled(float* grad, double grad_scale, int64_t step, double lr_factor) {
  const size_t n = master_.size();
  // An averaged gradient is what a collective delivers: in the gradients' own format.
  ops_.round_to_format(grad, n, precision_.gradients);
  const bool overflow = models::unscale_and_check(ops_, grad, n, grad_scale);
  if (!scaler_.update(overflow)) return false;
  optimizer_->step(master_.data(), grad, schedule_.lr(step) * lr_factor);
  refresh_working();
  return true;
}

void TrainableParameters::assign(const float* values) {
  ops_.copy(master_.data(), values, master_.size());
  refresh_working();
}

void TrainableParameters::copy_from(const TrainableParameters& other) {
  ops_.copy(master_.data(), other.master_.data(), master_.size());
  optimizer_->copy_state_from(*other.optimizer_);
  scaler_ = other.scaler_;
  refresh_working();
}

uint64_t TrainableParameters::wire_bytes() const {
  return master_.size() * gpu::storage_bytes(precision_.gradients);
}

PrecisionOutcome TrainableParameters::precision_outcome() const {
  PrecisionOutcome p;
  p.overflows = scaler_.overflows();
  p.skipped_steps = scaler_.skipped_steps();
  p.scale_growths = scaler_.growths();
  p.final_loss_scale = scaler_.scale();
  return p;
}

std::vector<float> TrainableParameters::download() const {
  std::vector<float> host(master_.size());
  ops_.download(host.data(), master_.data(), host.size());
  return host;
}

void TrainableParameters::refresh_working() {
  if (!working_.empty()) models::make_working_copy(ops_, master_.data(), working_.data(), master_.size(), precision_.weights);
}

}  // namespace dtsim::sim
