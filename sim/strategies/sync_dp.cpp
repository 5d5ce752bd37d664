#include "sync_dp.hpp"

#include <algorithm>

namespace dtsim::sim {

SyncDataParallel::SyncDataParallel(const TrainingContext& ctx)
    : ctx_(ctx),
      total_steps_(ctx.inputs.length.total_steps),
      flops_per_worker_step_(ctx.objective.flops_per_gradient(0)),
      params_(ctx),
      recorder_(ctx, evaluation_interval(ctx), ctx.inputs.length.total_steps,
                static_cast<double>(ctx.inputs.length.steps_per_epoch)),
      mean_grad_(ctx.ops, ctx.objective.num_params()),
      allreduce_(make_collective(CollectiveKind::Allreduce, ctx.config().collectives.algorithm,
                                 ctx.config().collectives.fidelity, ctx.platform, "sync",
                                 ctx.config().collectives.options(ctx.config().fabric.efficiency))) {
  for (int r = 0; r < ctx.config().workers; ++r) {
    Worker w;
    w.grads = gpu::Buffer<float>(ctx.ops, ctx.objective.num_params());
    workers_.push_back(std::move(w));
  }
}

void SyncDataParallel::spawn() {
  // The starting point, before any training.
  recorder_.record(0, params_.forward(), params_.numerics().activations, params_.lr(0), 0);
  for (int r = 0; r < ctx_.config().workers; ++r)
    sg4::Actor::create("worker" + std::to_string(r), ctx_.platform.workers[r],
                       [this, r] { failure_.guard([&] { worker(r); }); });
}

void SyncDataParallel::worker(int rank) {
  Worker& w = workers_[rank];
  const StragglerModel& stragglers = ctx_.heterogeneity.stragglers();
  for (int64_t step = 0; step < total_steps_; ++step) {
    // The real gradient of this worker's batch, at the parameters every replica holds for this step.
    w.batch_loss = ctx_.objective.gradient(rank, step, params_.forward(), w.grads.data(), params_.numerics());

    // What that costs on the simulated GPU (slow hosts are slower hosts already; this adds per-step draws).
    const double start = sg4::Engine::get_clock();
    sg4::this_actor::execute(flops_per_worker_step_ * stragglers.compute_multiplier(rank, step));
    w.compute_end = sg4::Engine::get_clock();
    w.time.compute += w.compute_end - start;

    allreduce_->run(rank, params_.wire_bytes());
    // The first worker out of the allreduce applies the step: by then every worker's gradient exists and
    // no worker can have started the next step.
    if (applied_steps_ == step) apply_update(step);
    const double now = sg4::Engine::get_clock();
    w.time.idle += last_ready_ - w.compute_end;
    w.time.communication += now - last_ready_;
  }
}

void SyncDataParallel::apply_update(int64_t step) {
  last_ready_ = 0.0;
  for (const Worker& w : workers_) last_ready_ = std::max(last_ready_, w.compute_end);

  // Average in rank order, whatever order the simulated transfers finished in.
  const size_t n = params_.size();
  ctx_.ops.copy(mean_grad_.data(), workers_[0].grads.data(), n);
  for (size_t r = 1; r < workers_.size(); ++r) ctx_.ops.axpy(1.0f, workers_[r].grads.data(), mean_grad_.data(), n);
  if (workers_.size() > 1) ctx_.ops.scale(1.0f / static_cast<float>(workers_.size()), mean_grad_.data(), n);
  params_.apply(mean_grad_.data(), step);

  for (const Worker& w : workers_) recorder_.add_train_loss(w.batch_loss);
  applied_steps_ = step + 1;
  if (recorder_.due(applied_steps_))
    recorder_.record(applied_steps_, params_.forward(), params_.numerics().activations, params_.lr(step),
                     static_cast<uint64_t>(applied_steps_) * allreduce_->bytes_per_call(params_.wire_bytes()));
}

StrategyOutcome SyncDataParallel::outcome() const {
  failure_.rethrow_if_failed();
  StrategyOutcome out;
  out.precision = params_.precision_outcome();
  out.steps = applied_steps_;
  out.bytes_sent = allreduce_->bytes_sent();
  for (const Worker& w : workers_) out.worker_time.push_back(w.time);
  out.final_params = params_.download();
  return out;
}

}  // namespace dtsim::sim
