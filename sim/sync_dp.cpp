#include "sync_dp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dtsim::sim {

SyncDataParallel::SyncDataParallel(const TrainingContext& ctx)
    : ctx_(ctx),
      global_order_(ctx.train().num_samples, ctx.config().global_batch(), ctx.config().seed),
      lr_schedule_(schedule_settings(ctx.config(), ctx.inputs.length)),
      precision_(precision_settings(ctx.config())),
      loss_scaler_(loss_scaler_settings(ctx.config())),
      allreduce_(make_collective(CollectiveKind::Allreduce, ctx.config().collectives.algorithm,
                                 ctx.config().collectives.fidelity, ctx.platform, "sync",
                                 ctx.config().collectives.options(ctx.config().fabric.efficiency))) {
  const RunConfig& cfg = ctx.config();
  total_steps_ = ctx.inputs.length.total_steps;
  eval_interval_ = std::max<int64_t>(1, ctx.inputs.length.steps_per_epoch / cfg.evals_per_epoch);
  flops_per_worker_step_ =
      cfg.batch_per_worker * (ctx.net.forward_flops_per_sample() + ctx.net.backward_flops_per_sample());
  stragglers_ = StragglerModel(cfg.heterogeneity.stragglers, cfg.seed);
  // Gradients travel in the format they are stored in.
  grad_bytes_ = ctx.net.num_params() * (precision_.gradients == gpu::NumberFormat::Fp32 ? 4 : 2);
  if (ctx.inputs.partition)
    for (int r = 0; r < cfg.workers; ++r) shard_samplers_.emplace_back(ctx.inputs.partition->shards[r], cfg.seed, r);

  const size_t n = ctx.net.num_params();
  std::vector<float> init(n);
  ctx.net.init_params(init.data(), cfg.seed);
  params_ = gpu::Buffer<float>(ctx.ops, n);
  ctx.ops.upload(params_.data(), init.data(), n);
  if (precision_.weights != gpu::NumberFormat::Fp32) working_params_ = gpu::Buffer<float>(ctx.ops, n);
  refresh_working_params();
  mean_grad_ = gpu::Buffer<float>(ctx.ops, n);
  optimizer_ = models::make_optimizer<float>(ctx.ops, ctx.net.param_tensors(), n, optimizer_settings(cfg));

  for (int r = 0; r < cfg.workers; ++r) {
    Worker w;
    w.workspace = ctx.net.make_workspace(ctx.ops, cfg.batch_per_worker);
    w.grads = gpu::Buffer<float>(ctx.ops, n);
    w.batch_indices.resize(cfg.batch_per_worker);
    w.batch_features.resize(static_cast<size_t>(cfg.batch_per_worker) * ctx.net.input_size());
    w.batch_labels.resize(cfg.batch_per_worker);
    workers_.push_back(std::move(w));
  }
  eval_workspace_ = ctx.net.make_workspace(ctx.ops, 1000, models::WorkspaceUse::Evaluation);
}

void SyncDataParallel::spawn() {
  evaluate(0);  // the starting point, before any training
  for (int r = 0; r < ctx_.config().workers; ++r)
    sg4::Actor::create("worker" + std::to_string(r), ctx_.platform.workers[r],
                       [this, r] { failure_.guard([&] { worker(r); }); });
}

void SyncDataParallel::worker(int rank) {
  Worker& w = workers_[rank];
  const int batch = ctx_.config().batch_per_worker;
  for (int64_t step = 0; step < total_steps_; ++step) {
    // The real gradient of this worker's shard, at the parameters every replica holds for this step.
    draw_batch(step, rank);
    models::gather_batch(ctx_.train(), w.batch_indices.data(), batch, w.batch_features.data(), w.batch_labels.data());
    models::NumericsOptions numerics;
    numerics.activations = precision_.activations;
    numerics.gradients = precision_.gradients;
    numerics.loss_scale = loss_scaler_.scale();
    const gpu::LossSums sums =
        ctx_.net.loss_and_gradient(ctx_.ops, w.workspace, forward_params(), w.batch_features.data(),
                                   w.batch_labels.data(), batch, w.grads.data(), numerics);
    w.batch_loss = sums.loss / batch;

    // What that costs on the simulated GPU.
    const double start = sg4::Engine::get_clock();
    sg4::this_actor::execute(flops_per_worker_step_ * stragglers_.compute_multiplier(rank, step));
    w.compute_end = sg4::Engine::get_clock();
    w.time.compute += w.compute_end - start;

    allreduce_->run(rank, grad_bytes_);
    // The first worker out of the allreduce applies the step: by then every worker's gradient exists and
    // no worker can have started the next step.
    if (applied_steps_ == step) apply_update(step);
    const double now = sg4::Engine::get_clock();
    w.time.idle += last_ready_ - w.compute_end;
    w.time.communication += now - last_ready_;
  }
}

void SyncDataParallel::draw_batch(int64_t step, int rank) {
  Worker& w = workers_[rank];
  const int batch = ctx_.config().batch_per_worker;
  if (shard_samplers_.empty()) {
    const int32_t* slice = global_order_.batch(step, rank * batch);
    std::copy(slice, slice + batch, w.batch_indices.begin());
  } else {
    shard_samplers_[rank].next(batch, w.batch_indices.data());
  }
}

void SyncDataParallel::apply_update(int64_t step) {
  last_ready_ = 0.0;
  for (const Worker& w : workers_) last_ready_ = std::max(last_ready_, w.compute_end);

  // Average in rank order, whatever order the simulated transfers finished in.
  const size_t n = ctx_.net.num_params();
  ctx_.ops.copy(mean_grad_.data(), workers_[0].grads.data(), n);
  for (size_t r = 1; r < workers_.size(); ++r) ctx_.ops.axpy(1.0f, workers_[r].grads.data(), mean_grad_.data(), n);
  if (workers_.size() > 1) ctx_.ops.scale(1.0f / static_cast<float>(workers_.size()), mean_grad_.data(), n);
  // The reduced result is what the collective delivers: in the gradients' own format.
  ctx_.ops.round_to_format(mean_grad_.data(), n, precision_.gradients);
  const bool overflow = models::unscale_and_check(ctx_.ops, mean_grad_.data(), n, loss_scaler_.scale());
  if (loss_scaler_.update(overflow)) {
    optimizer_->step(params_.data(), mean_grad_.data(), lr_schedule_.lr(step));
    refresh_working_params();
  }

  for (const Worker& w : workers_) train_loss_sum_ += w.batch_loss;
  train_loss_count_ += static_cast<int64_t>(workers_.size());
  applied_steps_ = step + 1;
  if (applied_steps_ % eval_interval_ == 0 || applied_steps_ == total_steps_) evaluate(applied_steps_);
}

void SyncDataParallel::evaluate(int64_t step) {
  const models::EvalResult test =
      models::evaluate_dataset(ctx_.net, ctx_.ops, eval_workspace_, forward_params(), ctx_.test(), precision_.activations);
  EvalPoint p;
  p.step = step;
  p.epoch = static_cast<double>(step) / static_cast<double>(ctx_.inputs.length.steps_per_epoch);
  p.sim_time_s = sg4::Engine::get_clock();
  p.lr = lr_schedule_.lr(std::max<int64_t>(step - 1, 0));  // the rate the last applied step used
  p.train_loss = train_loss_count_ > 0 ? train_loss_sum_ / train_loss_count_ : std::numeric_limits<double>::quiet_NaN();
  p.test_loss = test.loss;
  p.test_accuracy = test.accuracy;
  p.bytes_sent = static_cast<uint64_t>(step) * allreduce_->bytes_per_call(grad_bytes_);
  train_loss_sum_ = 0.0;
  train_loss_count_ = 0;
  ctx_.metrics.record(p);
}

void SyncDataParallel::refresh_working_params() {
  if (!working_params_.empty())
    models::make_working_copy(ctx_.ops, params_.data(), working_params_.data(), params_.size(), precision_.weights);
}

StrategyOutcome SyncDataParallel::outcome() const {
  failure_.rethrow_if_failed();
  StrategyOutcome out;
  out.precision.overflows = loss_scaler_.overflows();
  out.precision.skipped_steps = loss_scaler_.skipped_steps();
  out.precision.scale_growths = loss_scaler_.growths();
  out.precision.final_loss_scale = loss_scaler_.scale();
  out.steps = applied_steps_;
  out.bytes_sent = allreduce_->bytes_sent();
  for (const Worker& w : workers_) out.worker_time.push_back(w.time);
  out.final_params.resize(ctx_.net.num_params());
  ctx_.ops.download(out.final_params.data(), params_.data(), out.final_params.size());
  return out;
}

}  // namespace dtsim::sim
