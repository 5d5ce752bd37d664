#include "sim/strategies/sync/sync_dp.hpp"

#include <algorithm>
#include <cstring>

#include "sim/collectives/registry.hpp"
#include "sim/config/collective_algorithms.hpp"
#include "sim/scenario/errors.hpp"

namespace dtsim::sim {

SyncDataParallel::SyncDataParallel(const TrainingContext& ctx)
    : ctx_(ctx),
      local_(reads_section(ctx.config().strategy, "local")),
      micro_batches_(ctx.config().sync.accumulation_steps),
      total_steps_(ctx.inputs.length.total_steps),
      zero_(ctx.config().sync.zero_stage > 0),
      zero3_(ctx.config().sync.zero_stage == 3),
      recorder_(ctx, evaluation_cadence(ctx), ctx.inputs.length.total_steps,
                static_cast<double>(ctx.inputs.length.steps_per_epoch)),
      mean_(ctx.ops, ctx.objective.num_params()),
      scratch_(ctx.ops, ctx.objective.num_params()) {
  const RunConfig& cfg = ctx.config();
  const size_t n = ctx.objective.num_params();
  weight_bytes_ = static_cast<uint64_t>(ctx.compute.proxied() ? ctx.compute.proxy_weight_bytes()
                                                               : static_cast<double>(n) * run_memory_setup(cfg).weight_bytes);
  replicas_.push_back(std::make_unique<TrainableParameters>(ctx));
  // Local replicas start as exact copies and receive identical updates until they diverge.
  for (int r = 1; local_ && r < cfg.workers; ++r)
    replicas_.push_back(std::make_unique<TrainableParameters>(ctx, replicas_[0]->master()));
  deferred_gradients_ = !local_ && !cfg.compression.active() && ctx.heterogeneity.faults().empty();
  const auto with_buffers = [&](Worker& w) {
    w.grads = gpu::Buffer<float>(ctx.ops, n);
    if (micro_batches_ > 1) w.micro = gpu::Buffer<float>(ctx.ops, n);
  };
  if (deferred_gradients_) with_buffers(shared_gradient_);
  for (int r = 0; r < cfg.workers; ++r) {
    Worker w;
    if (!deferred_gradients_) with_buffers(w);
    workers_.push_back(std::move(w));
  }
  for (int r = 0; r < cfg.workers; ++r) active_.push_back(r);
  if (cfg.compression.active()) compression_ = std::make_unique<SyncGradientCompression>(ctx, cfg.workers);
  if (!ctx.heterogeneity.faults().empty()) watch_faults();
}

void SyncDataParallel::spawn() {
  // The starting point, before any training.
  recorder_.record(0, evaluated_params(), replicas_[0]->numerics().activations, replicas_[0]->lr(0), 0);
  if (ctx_.trace)
    for (int r = 0; r < ctx_.config().workers; ++r) ctx_.trace->name_track(r, "worker " + std::to_string(r));
  launch(0);
}

void SyncDataParallel::launch(int64_t first_step) {
  const RunConfig& cfg = ctx_.config();
  group_ = worker_group(ctx_.platform, active_);
  const size_t n = ctx_.objective.num_params();
  // Proxy mode: the buckets are the proxied workload's gradients; otherwise the model's, at their wire width.
  const double bytes_per_value = ctx_.compute.proxied()
                                     ? ctx_.compute.proxy_gradient_bytes()
                                     : static_cast<double>(replicas_[0]->wire_bytes()) / static_cast<double>(n);
  const std::string prefix = "sync/" + std::to_string(incarnation_) + "/";
  const int incarnation = incarnation_;
  const std::vector<Bucket> buckets = plan_buckets(ctx_.compute.segments(), cfg.sync.bucket_bytes, bytes_per_value);
  const uint64_t stepwise_cap = auto_stepwise_cap(buckets.size());
  // Kept by the streams, which make a bucket's all-gather when compression first needs it.
  const auto make = [this, prefix, incarnation, stepwise_cap, group = group_](CollectiveKind kind,
                                                                              const std::string& name) {
    const RunConfig& cfg = ctx_.config();
    // Compression's all-gathers and ZeRO's reduce-scatters and all-gathers: ring, as NCCL runs them.
    Algorithm algorithm = training_algorithm(kind, cfg.collectives.algorithm);
    // A survivor group the algorithm cannot serve (a hierarchical allreduce over unequal nodes): ring. The
    // first group is the user's cluster, where a refusal is the user's to fix.
    if (incarnation > 0 && !can_serve(kind, algorithm, group)) algorithm = Algorithm::Ring;
    CollectiveOptions options = collective_options(cfg);
    options.auto_stepwise_cap = stepwise_cap;
    try {
      return make_collective(kind, algorithm, cfg.collectives.fidelity, group, prefix + name, options);
    } catch (const CollectiveError& e) {
      throw InputError("collective", collective_key_of(e.cause()), e.reason(), e.hint());
    }
  };
  if (streams_) {
    collective_bytes_retired_ += streams_->bytes_sent();
    retired_streams_.push_back(std::move(streams_));
  }
  BucketWire wire;
  if (compression_)
    wire = [this](const Bucket& bucket, int64_t step) { return compression_->messages(bucket, step); };
  streams_ = std::make_unique<BucketStreams>(group_, buckets, bytes_per_value, make, wire,
                                             zero_ ? CollectiveKind::ReduceScatter : CollectiveKind::Allreduce);
  if (local_) param_allreduce_ = make(CollectiveKind::Allreduce, "params");
  if (zero_ && !zero3_) param_gather_ = make(CollectiveKind::AllGather, "params");
  if (zero3_) {
    if (!ctx_.compute.per_layer())
      throw InputError("sync", "sync.zero_stage", "stage 3 needs per-layer costs, which this objective has not",
                       "use sync.zero_stage = 1 or 2");
    weight_gathers_ = std::make_unique<WeightGathers>(
        group_, weight_units(buckets, ctx_.compute.segment_weight_bytes(), ctx_.config().sync.bucket_bytes), make,
        ctx_.config().sync.prefetch_units);
  }
  actors_.clear();
  for (size_t slot = 0; slot < active_.size(); ++slot) {
    const int r = active_[slot];
    const int s = static_cast<int>(slot);
    actors_.push_back(streams_->start(s, "stream" + std::to_string(r)));
    if (weight_gathers_) actors_.push_back(weight_gathers_->start(s, "gathers" + std::to_string(r)));
    actors_.push_back(sg4::Actor::create("worker" + std::to_string(r), ctx_.platform.workers[r],
                                         [this, r, s, first_step] { failure_.guard([&] { worker(r, s, first_step); }); }));
  }
}

uint64_t SyncDataParallel::auto_stepwise_cap(size_t calls_per_step) const {
  // Other traffic on the links ([background]) or failures mid-transfer are where stepwise and aggregated part
  // ways: there auto keeps its own budget. Without them the two agree within 0.01 % (collectives.md), and a
  // step's transfers are held to 7 % of its numerics.
  const HeterogeneityConfig& h = ctx_.config().heterogeneity;
  if (!h.background.empty() || !h.faults.events.empty()) return 0;
  double flops = 0.0;
  for (const int r : active_) flops += ctx_.objective.flops_per_gradient(r) * micro_batches_;
  return std::max<uint64_t>(1, numerics_stepwise_cap(flops) / std::max<size_t>(1, calls_per_step));
}

uint64_t SyncDataParallel::averaged_bytes() const {
  // In a proxy run the workload's trained weights are averaged, not the small model's.
  return ctx_.compute.proxied() ? weight_bytes_ : replicas_[0]->wire_bytes();
}

bool SyncDataParallel::gradient_averaging(int64_t step) const {
  return !local_ || step < ctx_.config().sync.sync_until_step || ctx_.config().sync.local_steps == 1;
}

bool SyncDataParallel::model_averaging_after(int64_t step) const {
  const int64_t local_index = step + 1 - ctx_.config().sync.sync_until_step;
  return local_index % ctx_.config().sync.local_steps == 0 || step + 1 == total_steps_;
}

void SyncDataParallel::worker(int rank, int slot, int64_t first_step) {
  const StragglerModel& stragglers = ctx_.heterogeneity.stragglers();
  try {
    for (int64_t step = first_step; step < total_steps_; ++step) {
      if (!deferred_gradients_) compute_gradient(rank, step, replica(rank));
      if (compression_ && gradient_averaging(step))
        compression_->contribute(rank, workers_[rank].grads.data(), step, static_cast<int>(active_.size()));
      // Slow hosts are slower hosts already; this adds the per-step draws.
      const double multiplier = stragglers.compute_multiplier(rank, step);
      const double start = sg4::Engine::get_clock();
      // Every micro-batch but the last runs forward and backward without communicating (DDP's no_sync).
      const ComputeCost& cost = ctx_.compute;
      if (micro_batches_ > 1) sg4::this_actor::execute((micro_batches_ - 1) * cost.gradient(rank) * multiplier);
      forward(workers_[rank], rank, slot, step, multiplier);
      if (gradient_averaging(step))
        synchronous_step(rank, slot, step, multiplier, start);
      else
        local_step(rank, step, multiplier, start);
      checkpoint_if_due(rank, step + 1);
    }
  } catch (const simgrid::NetworkFailureException&) {
    if (!recovering_) throw;  // a peer's failure: the recovery actor restarts the job
  } catch (const simgrid::CancelException&) {
    if (!recovering_) throw;
  }
}

void SyncDataParallel::forward(Worker& w, int rank, int slot, int64_t step, double multiplier) {
  if (!weight_gathers_) {
    sg4::this_actor::execute(ctx_.compute.forward(rank) * multiplier);
    return;
  }
  // ZeRO-3: each unit's weights are gathered first; the waits are communication, not compute.
  const double waited = weight_gathers_->forward(
      slot, step, [&](int u) { sg4::this_actor::execute(unit_forward(rank, u) * multiplier); });
  w.gather_wait += waited;
}

double SyncDataParallel::unit_forward(int rank, int u) const {
  const ComputeCost& cost = ctx_.compute;
  return weight_gathers_->over_segments(
      u, [&](size_t i) { return i < cost.segments().size() ? cost.forward(rank, i) : cost.tail_forward(rank); });
}

void SyncDataParallel::compute_gradient(int rank, int64_t step, const TrainableParameters& params) {
  Worker& w = gradient_of(rank);
  const size_t n = params.size();
  double loss = 0.0;
  for (int j = 0; j < micro_batches_; ++j) {
    float* target = j == 0 ? w.grads.data() : w.micro.data();
    loss += ctx_.objective.gradient(rank, step * micro_batches_ + j, params.forward(), target, params.numerics());
    if (j > 0) ctx_.ops.axpy(1.0f, w.micro.data(), w.grads.data(), n);
  }
  if (micro_batches_ > 1) ctx_.ops.scale(1.0f / static_cast<float>(micro_batches_), w.grads.data(), n);
  workers_[rank].batch_loss = loss / micro_batches_;
}

void SyncDataParallel::synchronous_step(int rank, int slot, int64_t step, double multiplier, double start) {
  Worker& w = workers_[rank];
  const bool overlap = ctx_.config().sync.overlap;
  // ZeRO-3: each unit's weights gathered before its backward (a bucket may span several units).
  int next_unit = 0;
  const ComputeCost& cost = ctx_.compute;
  const auto segment_flops = [&](size_t i) { return i < cost.segments().size() ? cost.backward(rank, i) : cost.tail(rank); };
  const auto execute = [multiplier](double flops) { sg4::this_actor::execute(flops * multiplier); };
  for (int b = 0; b < streams_->size(); ++b) {
    const Bucket& bucket = streams_->bucket(b);
    if (weight_gathers_)
      w.gather_wait += weight_gathers_->backward_over(slot, step, bucket.first_segment, bucket.segments,
                                                      bucket_work(rank, b), next_unit, segment_flops, execute);
    else
      execute(bucket_work(rank, b));
    if (overlap) streams_->hand(slot, b, step);
  }
  if (weight_gathers_ && next_unit < weight_gathers_->units()) {  // the frozen layers below the buckets
    const size_t tail_first = weight_gathers_->unit(next_unit).first_segment;
    const size_t all = cost.segment_weight_bytes().size();
    w.gather_wait += weight_gathers_->backward_over(slot, step, tail_first, all - tail_first, cost.tail(rank),
                                                    next_unit, segment_flops, execute);
  } else if (cost.tail(rank) > 0) {
    execute(cost.tail(rank));
  }
  w.compute_end = sg4::Engine::get_clock();
  w.time.compute += w.compute_end - start - w.gather_wait;
  w.time.communication += w.gather_wait;
  w.gather_wait = 0;
  if (!overlap)
    for (int b = 0; b < streams_->size(); ++b) streams_->hand(slot, b, step);
  streams_->wait_all(slot);
  // The first worker out of the allreduce applies the step: by then every worker's gradient exists and
  // no worker can have started the next step.
  if (applied_steps_ == step) apply_gradient_average(step);
  account_wait(w);
  trace_exchange(rank, w, start, step, "allreduce");
  update(w, rank, multiplier, step);
  if (param_gather_) gather_weights(w, rank);
}

void SyncDataParallel::gather_weights(Worker& w, int rank) {
  // ZeRO: each worker updated its 1/N shard; every worker needs all of the new weights for the next forward.
  const double start = sg4::Engine::get_clock();
  param_gather_->run(rank, weight_bytes_);
  w.time.communication += sg4::Engine::get_clock() - start;
}

double SyncDataParallel::bucket_work(int rank, int b) const {
  const Bucket& bucket = streams_->bucket(b);
  double work = 0.0;
  for (size_t i = bucket.first_segment; i < bucket.first_segment + bucket.segments; ++i)
    work += ctx_.compute.backward(rank, i);
  return work;
}

void SyncDataParallel::update(Worker& w, int rank, double multiplier, int64_t step) {
  // Every replica applies the averaged gradient itself, as DDP's optimizer step does on each GPU.
  const double start = sg4::Engine::get_clock();
  sg4::this_actor::execute(ctx_.compute.update(rank) * multiplier);
  w.time.compute += sg4::Engine::get_clock() - start;
  if (ctx_.trace) ctx_.trace->span(rank, "update", "compute", start, sg4::Engine::get_clock(), step);
}

void SyncDataParallel::trace_exchange(int rank, const Worker& w, double start, int64_t step, const char* exchange) {
  // The same three stretches account_wait charges: computing, waiting for the slowest peer, exchanging.
  if (!ctx_.trace) return;
  ctx_.trace->span(rank, "compute", "compute", start, w.compute_end, step);
  ctx_.trace->span(rank, "wait for slowest", "idle", w.compute_end, last_ready_, step);
  ctx_.trace->span(rank, exchange, "communication", std::max(last_ready_, w.compute_end), sg4::Engine::get_clock(), step);
}

void SyncDataParallel::local_step(int rank, int64_t step, double multiplier, double start) {
  Worker& w = workers_[rank];
  sg4::this_actor::execute((ctx_.compute.backward(rank) + ctx_.compute.update(rank)) * multiplier);
  w.compute_end = sg4::Engine::get_clock();
  w.time.compute += w.compute_end - start;
  replica(rank).apply(w.grads.data(), step);
  w.loss_sum += w.batch_loss;
  ++w.loss_count;
  if (!model_averaging_after(step)) {
    if (ctx_.trace) ctx_.trace->span(rank, "compute", "compute", start, w.compute_end, step);
    return;
  }
  param_allreduce_->run(rank, averaged_bytes());
  if (applied_steps_ <= step) apply_model_average(step);
  account_wait(w);
  trace_exchange(rank, w, start, step, "model average");
}

void SyncDataParallel::account_wait(Worker& w) {
  const double now = sg4::Engine::get_clock();
  w.time.idle += last_ready_ - w.compute_end;
  w.time.communication += now - last_ready_;
}

void SyncDataParallel::apply_gradient_average(int64_t step) {
  last_ready_ = 0.0;
  for (const int r : active_) last_ready_ = std::max(last_ready_, workers_[r].compute_end);

  // Average in rank order, whatever order the simulated transfers finished in.
  const size_t n = replicas_[0]->size();
  if (compression_) {
    for (int b = 0; b < streams_->size(); ++b)
      bytes_so_far_ += streams_->bytes_of(b, compression_->messages(streams_->bucket(b), step));
    compression_->combine(step, mean_.data(), recorder_);
  } else {
    for (size_t i = 0; i < active_.size(); ++i) {
      const int r = active_[i];
      if (deferred_gradients_) compute_gradient(r, step, replica(r));  // into the one shared buffer
      const float* g = gradient_of(r).grads.data();
      if (i == 0)
        ctx_.ops.copy(mean_.data(), g, n);
      else
        ctx_.ops.axpy(1.0f, g, mean_.data(), n);
    }
    if (active_.size() > 1) ctx_.ops.scale(1.0f / static_cast<float>(active_.size()), mean_.data(), n);
    bytes_so_far_ += streams_->bytes_per_step();
    if (param_gather_) bytes_so_far_ += param_gather_->bytes_per_call(weight_bytes_);
    if (weight_gathers_) bytes_so_far_ += weight_gathers_->bytes_per_step();
  }
  if (replicas_.size() == 1) {
    replicas_[0]->apply(mean_.data(), step);
  } else {
    for (auto& r : replicas_) {  // the same update on every local replica (apply() rounds its input in place)
      ctx_.ops.copy(scratch_.data(), mean_.data(), n);
      r->apply(scratch_.data(), step);
    }
  }
  applied_steps_ = step + 1;
  missed_worker_steps_ += static_cast<int64_t>(workers_.size() - active_.size());
  if (applied_steps_ == step_at_failure_) {  // back where a restart started from: what it cost in all
    nlohmann::json& report = fault_reports_[report_waiting_catch_up_ - 1];
    report["caught_up_at_s"] = sg4::Engine::get_clock();
    report["time_lost_s"] = sg4::Engine::get_clock() - report["failed_at_s"].get<double>();
    step_at_failure_ = -1;
  }
  // The losses go to the divergence rule only once the step counts as applied: a divergence ends this actor
  // inside add_train_loss, and the run's progress (and any other worker still to leave this step) must see the
  // step as done, not apply it a second time.
  for (const int r : active_) recorder_.add_train_loss(workers_[r].batch_loss, step + 1);
  record_if_due(applied_steps_, step);
}

void SyncDataParallel::apply_model_average(int64_t step) {
  last_ready_ = 0.0;
  for (const Worker& w : workers_) last_ready_ = std::max(last_ready_, w.compute_end);
  const float* average = evaluated_params();
  for (auto& r : replicas_) r->assign(average);
  bytes_so_far_ += param_allreduce_->bytes_per_call(averaged_bytes());
  ++model_averagings_;
  applied_steps_ = step + 1;  // before the divergence rule sees the losses (apply_gradient_average says why)
  for (Worker& w : workers_) {
    const double loss = w.loss_count > 0 ? w.loss_sum / static_cast<double>(w.loss_count) : 0.0;
    const bool counted = w.loss_count > 0;
    w.loss_sum = 0.0;
    w.loss_count = 0;
    if (counted) recorder_.add_train_loss(loss, step + 1);
  }
  record_if_due(applied_steps_, step);
}

void SyncDataParallel::record_if_due(int64_t applied, int64_t step) {
  // Local SGD records only at averagings: an evaluation point is due when one was passed since the last.
  bool due = recorder_.due(applied);
  for (int64_t s = last_recorded_ + 1; !due && s < applied; ++s) due = recorder_.due(s);
  if (!due) return;
  recorder_.record(applied, evaluated_params(), replicas_[0]->numerics().activations, replicas_[0]->lr(step),
                   bytes_so_far_, nullptr, missed_worker_steps_ > 0 ? epochs_trained() : -1.0);
  last_recorded_ = applied;
}

double SyncDataParallel::epochs_trained() const {
  // Applied steps times the full group, less what the lost workers missed, over an epoch's worker-steps: with
  // no loss this is applied / steps per epoch, to the last bit.
  const double workers = static_cast<double>(workers_.size());
  const double per_epoch = static_cast<double>(ctx_.inputs.length.steps_per_epoch) * workers;
  const double trained = static_cast<double>(applied_steps_) * workers - static_cast<double>(missed_worker_steps_);
  return per_epoch > 0 ? trained / per_epoch : 0.0;
}

const float* SyncDataParallel::evaluated_params() {
  if (replicas_.size() == 1) return replicas_[0]->forward();
  const size_t n = replicas_[0]->size();
  // Replicas that agree bit for bit (local SGD with H = 1, or right after an averaging) are evaluated as they
  // are: their mean would round (x + x + x ≠ 3x in floats), and H = 1 would no longer evaluate sync's model.
  bool identical = true;
  for (size_t r = 1; r < replicas_.size() && identical; ++r)
    identical = std::memcmp(replicas_[r]->master(), replicas_[0]->master(), n * sizeof(float)) == 0;
  if (identical) return replicas_[0]->forward();
  ctx_.ops.copy(mean_.data(), replicas_[0]->master(), n);
  for (size_t r = 1; r < replicas_.size(); ++r) ctx_.ops.axpy(1.0f, replicas_[r]->master(), mean_.data(), n);
  ctx_.ops.scale(1.0f / static_cast<float>(replicas_.size()), mean_.data(), n);
  return mean_.data();
}

StrategyOutcome SyncDataParallel::outcome() const {
  failure_.rethrow_if_failed();
  StrategyOutcome out;
  out.precision = replicas_[0]->precision_outcome();
  out.steps = applied_steps_;
  if (applied_steps_ < total_steps_ && active_.empty()) out.unfinished = every_worker_failed_reason(recovery_began_);
  out.bytes_sent = collective_bytes_retired_ + streams_->bytes_sent() +
                  (param_allreduce_ ? param_allreduce_->bytes_sent() : 0) + (param_gather_ ? param_gather_->bytes_sent() : 0) +
                  (weight_gathers_ ? weight_gathers_->bytes_sent() : 0);
  // Whatever a worker spent neither computing nor communicating is idle: besides waiting for the slowest peer
  // (counted step by step), waiting for a failure to be detected and recovered from, for a checkpoint to be
  // written, for the last peers to finish, or being down itself. So each worker's three parts add up to the
  // run's simulated time, as async-ps's and federated learning's do.
  const double end = sg4::Engine::get_clock();
  for (size_t r = 0; r < workers_.size(); ++r) {
    WorkerTime t = workers_[r].time;
    const double unaccounted = end - t.compute - t.communication - t.idle;
    if (unaccounted > 0.0) {
      t.idle += unaccounted;
      // Without a failure it is the wait at the end for the last peer, less the checkpoint writes (their own
      // spans), so the timeline shows it there too (a failure's wait has its own spans, from recover()).
      const double end_wait = unaccounted - workers_[r].checkpoint_s;
      if (ctx_.trace && fault_reports_.empty() && end_wait > 0.0)
        ctx_.trace->span(static_cast<int>(r), "wait for the last peer", "idle", end - end_wait, end,
                         std::max<int64_t>(0, applied_steps_ - 1));
    }
    out.worker_time.push_back(t);
  }
  out.final_params = replicas_[0]->download();
  const double steps = std::max<double>(1.0, static_cast<double>(applied_steps_));
  WorkerTime mean;
  for (const Worker& w : workers_) {
    mean.compute += w.time.compute;
    mean.communication += w.time.communication;
    mean.idle += w.time.idle;
  }
  const double per = 1.0 / (steps * static_cast<double>(workers_.size()));
  out.details["per_step_mean_s"] = {{"compute", mean.compute * per},
                                    {"exposed_communication", mean.communication * per},
                                    {"waiting_for_slowest", mean.idle * per}};
  out.details["buckets"] = streams_->size();
  out.details["collective_fidelity"] = to_string(streams_->fidelity());
  out.details["micro_batches"] = micro_batches_;
  if (compression_) out.details["compression"] = recorder_.compression_totals();
  const int64_t checkpoints = checkpoints_written_ + (write_finished(sg4::Engine::get_clock()) ? 1 : 0);
  if (!fault_reports_.empty() || checkpoints > 0 || !failed_.empty()) {
    out.details["faults"] = fault_reports_;
    // Failures no recovery got to: every worker was down when one had to run it (the run ends failed).
    if (!failed_.empty())
      out.details["faults"].push_back({{"workers", failed_},
                                       {"failed_at_s", recovery_began_},
                                       {"reaction", "none"},
                                       {"note", "no worker was up to recover the job"}});
    out.details["checkpoints_written"] = checkpoints;
    // The epochs the model was trained on, fewer than the steps say once workers were lost (elastic).
    if (missed_worker_steps_ > 0) out.details["epochs"] = epochs_trained();
    out.details["workers_at_end"] = active_.size();
  }
  if (local_) {
    out.details["local_steps"] = ctx_.config().sync.local_steps;
    out.details["sync_until_step"] = ctx_.config().sync.sync_until_step;
    out.details["model_averagings"] = model_averagings_;
  }
  return out;
}

std::string describe_sync_data_parallel(const RunConfig& c) {
  const std::string allreduce = std::string(to_string(c.collectives.algorithm)) + " allreduce, global batch " +
                                std::to_string(c.global_batch());
  if (reads_section(c.strategy, "local"))
    return "local SGD averaging every " + std::to_string(c.sync.local_steps) + " steps with " + allreduce;
  return "synchronous data parallel with " + allreduce;
}

}  // namespace dtsim::sim
