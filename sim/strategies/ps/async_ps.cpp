#include "sim/strategies/ps/async_ps.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "sim/scenario/errors.hpp"
#include "sim/strategies/ps/ps_partition.hpp"

namespace dtsim::sim {
namespace {

std::string where(const TrainingContext& ctx) {
  return ctx.config().scenario_path.empty() ? std::string("scenario") : ctx.config().scenario_path;
}

std::vector<ParameterRange> shard_ranges(const TrainingContext& ctx) {
  const size_t tensors = ctx.objective.param_tensors().size();
  const int servers = ctx.config().ps.servers;
  if (tensors < static_cast<size_t>(servers))
    throw InputError(where(ctx), "ps.servers",
                     "the model has " + std::to_string(tensors) + " parameter tensors, too few for " +
                         std::to_string(servers) + " shards of whole tensors",
                     "use at most " + std::to_string(tensors) + " shards");
  if (ctx.platform.servers.size() < static_cast<size_t>(servers))
    throw std::logic_error("async-ps: the platform was built without its server hosts");
  return split_parameters(ctx.objective.param_tensors(), servers);
}

void refuse_link_failures(const TrainingContext& ctx) {
  for (const FaultTransition& t : ctx.heterogeneity.faults().transitions())
    if (t.link)
      throw InputError(where(ctx), "faults.events", "async-ps survives worker and node failures, not link failures",
                       "fail the worker instead of its link");
}

int64_t planned_gradients(const TrainingContext& ctx) {
  return ctx.inputs.length.total_steps * ctx.config().workers;
}

int64_t planned_updates(const TrainingContext& ctx) {
  const int64_t k = ctx.config().ps.gradients_per_update;
  return (planned_gradients(ctx) + k - 1) / k;
}

// Shard 0's updates per epoch and between evaluation points.
double updates_per_epoch(const TrainingContext& ctx) {
  return static_cast<double>(ctx.inputs.length.steps_per_epoch) * ctx.config().workers /
         ctx.config().ps.gradients_per_update;
}

// eval.per_epoch evaluations in an epoch's updates, steps per epoch × workers / gradients per update.
EvaluationCadence update_cadence(const TrainingContext& ctx) {
  const EvaluationCadence per_step = evaluation_cadence(ctx);
  return {per_step.steps * ctx.config().workers, per_step.evaluations * ctx.config().ps.gradients_per_update};
}

}  // namespace

AsyncParameterServer::AsyncParameterServer(const TrainingContext& ctx)
    : ctx_(ctx),
      config_(ctx.config().ps),
      ranges_(shard_ranges(ctx)),
      channel_(ctx.platform, config_.servers, "ps"),
      job_(ctx.config().workers, config_.servers, planned_gradients(ctx)),
      recorder_(ctx, update_cadence(ctx), planned_updates(ctx), updates_per_epoch(ctx)),
      total_updates_(planned_updates(ctx)),
      scratch_params_(ctx.ops, ctx.objective.num_params()),
      scratch_grads_(ctx.ops, ctx.objective.num_params()) {
  refuse_link_failures(ctx);
  for (size_t s = 0; s < ranges_.size(); ++s) tensor_shard_.insert(tensor_shard_.end(), ranges_[s].tensors.size(), s);
  if (ctx.config().compression.active()) {
    const models::CompressionSettings& settings = ctx.compression;
    for (int w = 0; w < ctx.config().workers; ++w)
      compressors_.emplace_back(ctx.ops, ctx.objective.tensor_layouts(), ctx.objective.num_params(), settings, w);
  }
  ShardServer::Hooks hooks;
  hooks.updated = [this](const ShardServer& s, const std::vector<double>& losses, double lr) { updated(s, losses, lr); };
  hooks.stopped = [this](const ShardServer& s) { stopped(s); };
  // A proxy run's shards own whole layers of the proxied workload, as a timing-only run's do (its values
  // are split apart from the small model's).
  proxy_values_ = ctx.inputs.proxy ? split_workload_layers(*ctx.inputs.proxy, config_.servers)
                                   : std::vector<uint64_t>(static_cast<size_t>(config_.servers), 0);
  for (int s = 0; s < config_.servers; ++s)
    shards_.push_back(std::make_unique<ShardServer>(s, ctx_, config_, ranges_[static_cast<size_t>(s)], channel_, job_,
                                                    hooks, proxy_values_[static_cast<size_t>(s)]));
  ctx.heterogeneity.on_fault([this](const FaultTransition& t) { fault(t); });
}

void AsyncParameterServer::spawn() {
  last_lr_ = shards_[0]->params().lr(0);
  record(0);  // the starting point
  if (ctx_.trace)
    for (int w = 0; w < ctx_.config().workers; ++w) ctx_.trace->name_track(w, "worker " + std::to_string(w));
  for (int s = 0; s < config_.servers; ++s)
    sg4::Actor::create("ps-shard" + std::to_string(s), ctx_.platform.servers[static_cast<size_t>(s)],
                       [this, s] { failure_.guard([&] { shards_[static_cast<size_t>(s)]->serve(); }); });
  for (int w = 0; w < ctx_.config().workers; ++w) start_worker(w);
}

void AsyncParameterServer::start_worker(int rank) {
  sg4::Actor::create("worker" + std::to_string(rank), ctx_.platform.workers[static_cast<size_t>(rank)],
                     [this, rank] { failure_.guard([&] { worker(rank); }); });
}

// Also the body of a worker restarted after its host came back: everything it must remember is in its ledger.
void AsyncParameterServer::worker(int rank) {
  WorkerLedger& me = job_.worker(rank);
  if (job_.complete()) return;
  uint64_t computation = me.next_computation++;
  if (!job_.take_ticket(rank, computation)) {
    say_goodbye(rank);
    return;
  }
  Parts parts = fetch(rank, computation, false);
  const StragglerModel& stragglers = ctx_.heterogeneity.stragglers();
  for (;;) {
    const int64_t data_step = me.next_data_step;
    double loss = 0.0;
    double loss_scale = 1.0;
    std::vector<uint64_t> bytes;
    std::vector<gpu::Buffer<float>> slices = compute(rank, parts, &loss, &loss_scale, &bytes);
    job_.mark_computed(rank, computation);

    const double start = sg4::Engine::get_clock();
    // The servers apply the update; their compute is not modelled.
    sg4::this_actor::execute(ctx_.compute.gradient(rank) * stragglers.compute_multiplier(rank, data_step));
    me.time.compute += sg4::Engine::get_clock() - start;
    if (ctx_.trace) ctx_.trace->span(rank, "compute", "compute", start, sg4::Engine::get_clock(), data_step);

    const uint64_t next = me.next_computation++;
    const bool more = job_.take_ticket(rank, next);
    push(rank, computation, std::move(slices), bytes, loss, loss_scale, more, next);
    if (!more) return;
    parts = fetch(rank, next, true);
    computation = next;
  }
}

AsyncParameterServer::Parts AsyncParameterServer::fetch(int rank, uint64_t computation, bool first_requested) {
  WorkerLedger& me = job_.worker(rank);
  const double start = sg4::Engine::get_clock();
  const auto pull_request = [&] {
    auto request = std::make_unique<ShardRequest>();
    request->worker = rank;
    request->next = ShardRequest::Next::Params;
    request->next_computation = computation;
    return request;
  };
  Parts parts(shards_.size());
  if (!config_.bounded()) {
    if (!first_requested) {
      std::vector<ShardPayload> requests;
      for (size_t s = 0; s < shards_.size(); ++s)
        requests.push_back(job_.requests.send(rank, pull_request(), kControlMessageBytes));
      channel_.push(rank, requests);
    }
    const std::vector<ShardPayload> got = channel_.pull(rank);
    for (size_t s = 0; s < shards_.size(); ++s) parts[s] = take_reply(got[s], computation);
  } else {
    // Shard by shard under a bound (see ps_shard.hpp).
    for (size_t s = 0; s < shards_.size(); ++s) {
      if (!(first_requested && s == 0)) send(rank, static_cast<int>(s), pull_request(), kControlMessageBytes);
      parts[s] = take_reply(channel_.pull_from(rank, static_cast<int>(s)), computation);
    }
  }
  me.time.communication += sg4::Engine::get_clock() - start;
  // Under a staleness bound the pull includes the time a shard held it (summary.json counts that as idle).
  if (ctx_.trace) ctx_.trace->span(rank, "pull", "communication", start, sg4::Engine::get_clock(), me.next_data_step);
  return parts;
}

std::unique_ptr<ShardReply> AsyncParameterServer::take_reply(const ShardPayload& payload, uint64_t computation) {
  std::unique_ptr<ShardReply> reply = job_.replies.take(payload);
  if (!reply || reply->computation != computation)
    throw std::logic_error("async-ps: a worker received parameters meant for another computation");
  return reply;
}

std::vector<gpu::Buffer<float>> AsyncParameterServer::compute(int rank, Parts& parts, double* loss,
                                                               double* loss_scale, std::vector<uint64_t>* push_bytes) {
  WorkerLedger& me = job_.worker(rank);
  // The model as pulled, assembled in the one scratch buffer.
  double scale = std::numeric_limits<double>::infinity();
  for (size_t s = 0; s < shards_.size(); ++s) {
    ctx_.ops.copy(scratch_params_.data() + ranges_[s].offset, parts[s]->snapshot->data(), ranges_[s].size);
    scale = std::min(scale, parts[s]->loss_scale);  // the most cautious shard's scale
  }
  models::NumericsOptions numerics = shards_[0]->params().numerics();
  numerics.loss_scale = scale;
  const int64_t step = me.next_data_step++;
  *loss = ctx_.objective.gradient(rank, step, scratch_params_.data(), scratch_grads_.data(), numerics);
  *loss_scale = scale;
  parts.clear();  // the snapshots are no longer needed by this computation
  *push_bytes = compress(rank, step, scale);

  std::vector<gpu::Buffer<float>> slices;
  for (const ParameterRange& r : ranges_) {
    slices.emplace_back(ctx_.ops, r.size);
    ctx_.ops.copy(slices.back().data(), scratch_grads_.data() + r.offset, r.size);
  }
  return slices;
}

std::vector<uint64_t> AsyncParameterServer::compress(int rank, int64_t step, double scale) {
  std::vector<uint64_t> bytes;
  for (const auto& shard : shards_) bytes.push_back(shard->gradient_bytes());
  if (compressors_.empty()) return bytes;
  float* grad = scratch_grads_.data();
  const size_t n = scratch_grads_.size();
  // An overflow goes dense and leaves the compressor alone (see async_ps.hpp).
  if (ctx_.ops.count_nonfinite(grad, n) > 0) return bytes;
  // Compressed as the update sees it, unscaled; scaled back to travel with its loss scale.
  if (scale != 1.0) ctx_.ops.scale(static_cast<float>(1.0 / scale), grad, n);
  const models::CompressionResult result = compressors_[static_cast<size_t>(rank)].compress(grad, step);
  if (scale != 1.0) ctx_.ops.scale(static_cast<float>(scale), grad, n);
  std::fill(bytes.begin(), bytes.end(), 0);
  for (const models::WireOp& op : result.wire) bytes[tensor_shard_.at(op.tensor)] += op.bytes_per_worker;
  // Proxy mode: a shard's push carries its workload layers at the bytes per value its slice of the small
  // model was compressed to.
  if (ctx_.compute.proxied())
    for (size_t s = 0; s < bytes.size(); ++s)
      bytes[s] = ComputeCost::proxy_compressed_message(bytes[s], ranges_[s].size, static_cast<double>(proxy_values_[s]));
  recorder_.add_compression(result.stats);
  return bytes;
}

void AsyncParameterServer::push(int rank, uint64_t computation, std::vector<gpu::Buffer<float>> slices,
                                const std::vector<uint64_t>& bytes, double loss, double loss_scale, bool more,
                                uint64_t next) {
  WorkerLedger& me = job_.worker(rank);
  const double start = sg4::Engine::get_clock();
  std::vector<ShardPayload> payloads;
  for (size_t s = 0; s < shards_.size(); ++s) {
    auto request = std::make_unique<ShardRequest>();
    request->worker = rank;
    request->has_gradient = true;
    request->computation = computation;
    request->gradient = std::move(slices[s]);
    request->loss_scale = loss_scale;
    request->batch_loss = loss;
    if (!more)
      request->next = ShardRequest::Next::Goodbye;
    else if (config_.bounded() && s != 0)
      request->next = ShardRequest::Next::Nothing;  // pulled from this shard later, in shard order
    else
      request->next = ShardRequest::Next::Params;
    request->next_computation = next;
    payloads.push_back(job_.requests.send(rank, std::move(request), bytes[s]));
  }
  channel_.push(rank, payloads);
  me.time.communication += sg4::Engine::get_clock() - start;
  if (ctx_.trace) ctx_.trace->span(rank, "push", "communication", start, sg4::Engine::get_clock(), me.next_data_step - 1);
  job_.ticket_spent(rank, computation);
  if (!more) me.said_goodbye = true;
}

void AsyncParameterServer::say_goodbye(int rank) {
  WorkerLedger& me = job_.worker(rank);
  const double start = sg4::Engine::get_clock();
  // A shard that already stopped needs no goodbye (it stopped because there was nothing left to do).
  for (size_t s = 0; s < shards_.size(); ++s)
    if (job_.shard_serving(static_cast<int>(s))) {
      auto request = std::make_unique<ShardRequest>();
      request->worker = rank;
      request->next = ShardRequest::Next::Goodbye;
      send(rank, static_cast<int>(s), std::move(request), kControlMessageBytes);
    }
  me.time.communication += sg4::Engine::get_clock() - start;
  me.said_goodbye = true;
}

void AsyncParameterServer::send(int rank, int shard, std::unique_ptr<ShardRequest> request, uint64_t bytes) {
  channel_.push_to(rank, shard, job_.requests.send(rank, std::move(request), bytes));
}

void AsyncParameterServer::updated(const ShardServer& shard, const std::vector<double>& losses, double lr) {
  model_changed_ = true;
  if (shard.index() != 0) return;  // shard 0 is the step clock
  for (const double l : losses) recorder_.add_train_loss(l, shard.version());
  last_lr_ = lr;
  // The last planned update is evaluated when every shard has finished, so the row shows the final model.
  const int64_t update = shard.version();
  if (update != total_updates_ && recorder_.due(update)) record(update);
}

void AsyncParameterServer::stopped(const ShardServer& shard) {
  if (!job_.shard_stopped(shard.index())) return;
  end_time_ = sg4::Engine::get_clock();
  const int64_t update = shards_[0]->version();
  if (model_changed_ || update != last_recorded_) record(update);
}

void AsyncParameterServer::record(int64_t step) {
  // The whole model as the shards hold it at this instant (the scratch buffer is free: a gradient
  // computation never yields).
  for (size_t s = 0; s < shards_.size(); ++s)
    ctx_.ops.copy(scratch_params_.data() + ranges_[s].offset, shards_[s]->params().forward(), ranges_[s].size);
  const StalenessInterval staleness = job_.staleness.take_interval();
  // Epochs from the gradients shard 0 applied (every shard sees each): an update of n-softsync averages
  // gradients_per_update of them, except perhaps the last.
  const double gradients_per_epoch =
      static_cast<double>(ctx_.inputs.length.steps_per_epoch) * static_cast<double>(ctx_.config().workers);
  const double epoch =
      gradients_per_epoch > 0 ? static_cast<double>(shards_[0]->gradients_applied()) / gradients_per_epoch : 0.0;
  recorder_.record(step, scratch_params_.data(), shards_[0]->params().numerics().activations, last_lr_,
                   channel_.bytes_sent(), &staleness, epoch);
  last_recorded_ = step;
  model_changed_ = false;
}

void AsyncParameterServer::fault(const FaultTransition& t) {
  if (t.link) return;  // refused in the constructor
  if (t.down) {
    job_.cut_off(t.worker, t.time);
    return;
  }
  job_.back_up(t.worker, t.time);
  WorkerLedger& me = job_.worker(t.worker);
  if (job_.complete() || me.said_goodbye) return;
  ++me.restarts;
  start_worker(t.worker);
}

StrategyOutcome AsyncParameterServer::outcome() const {
  failure_.rethrow_if_failed();
  const double end = sg4::Engine::get_clock();
  StrategyOutcome out;
  out.precision = shards_[0]->params().precision_outcome();
  out.steps = job_.staleness.gradients_applied() / ctx_.config().workers;
  out.bytes_sent = channel_.bytes_sent();
  for (int w = 0; w < ctx_.config().workers; ++w) {
    WorkerTime t = job_.worker(w).time;
    // Held by bounded staleness: idle, not transferring (a held pull whose worker then failed adds neither).
    t.communication = std::max(0.0, t.communication - job_.staleness.held_seconds(w));
    t.idle = std::max(0.0, end - t.compute - t.communication);
    out.worker_time.push_back(t);
  }
  for (const auto& shard : shards_) {
    const std::vector<float> part = shard->params().download();
    out.final_params.insert(out.final_params.end(), part.begin(), part.end());
  }
  out.details = details(end);
  if (!compressors_.empty()) out.details["compression"] = recorder_.compression_totals();
  return out;
}

nlohmann::json AsyncParameterServer::details(double end) const {
  nlohmann::json d;
  const StalenessStats& st = job_.staleness;
  d["servers"] = config_.servers;
  std::vector<size_t> sizes;
  for (const ParameterRange& r : ranges_) sizes.push_back(r.size);
  d["shard_parameters"] = sizes;
  d["gradients_per_update"] = config_.gradients_per_update;
  d["staleness_bound"] = config_.bounded() ? nlohmann::json(config_.staleness_bound) : nlohmann::json(nullptr);
  d["staleness_lr"] = models::to_string(config_.staleness_lr);
  d["staleness_exponent"] = config_.staleness_exponent;
  d["staleness_threshold"] = config_.staleness_threshold;
  d["gradients_planned"] = job_.gradients();
  d["gradients_applied"] = st.gradients_applied();
  d["updates"] = shards_[0]->version();
  d["mean_staleness"] = st.mean_staleness();
  d["max_staleness"] = st.max_staleness();
  d["held_pulls"] = st.held_pulls();
  d["workers"] = st.workers_json();

  const FaultSchedule& faults = ctx_.heterogeneity.faults();
  if (!faults.empty()) {
    nlohmann::json f;
    int64_t lost = 0, pulls_lost = 0, restarts = 0;
    double away = 0.0;
    for (int w = 0; w < ctx_.config().workers; ++w) {
      const WorkerLedger& me = job_.worker(w);
      const double away_w = me.away_s + (me.down_since >= 0 ? end - me.down_since : 0.0);
      d["workers"][static_cast<size_t>(w)]["gradients_lost"] = me.gradients_lost;
      d["workers"][static_cast<size_t>(w)]["restarts"] = me.restarts;
      d["workers"][static_cast<size_t>(w)]["time_away_s"] = away_w;
      lost += me.gradients_lost;
      pulls_lost += me.pulls_lost;
      restarts += me.restarts;
      away += away_w;
    }
    int64_t dropped = 0, discarded = 0;
    for (const auto& shard : shards_) {
      dropped += shard->dropped_computations();
      discarded += shard->discarded_gradients();
    }
    f["gradients_lost"] = lost;             // computed, lost before reaching every shard, computed again
    f["pulls_lost"] = pulls_lost;           // asked for, lost before the gradient existed
    f["restarts"] = restarts;
    f["time_away_s"] = away;                // summed over workers
    f["never_applied"] = job_.gradients() - st.gradients_applied();  // work nobody was left to redo
    f["computations_dropped_at_shards"] = dropped;
    f["gradients_discarded_at_shards"] = discarded;
    d["faults"] = f;
  }
  return d;
}

std::string describe_async_parameter_server(const RunConfig& c) {
  return "asynchronous parameter server (" + std::to_string(c.ps.servers) + (c.ps.servers == 1 ? " shard" : " shards") +
         ", " +
         (c.ps.bounded() ? "staleness bound " + std::to_string(c.ps.staleness_bound) : std::string("unbounded staleness")) +
         "), batch " + std::to_string(c.batch_per_worker) + " per worker";
}

}  // namespace dtsim::sim
