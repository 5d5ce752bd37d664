#include "sim/strategies/ps/ps_shard.hpp"

#include <algorithm>

#include "models/staleness.hpp"
#include "sim/config/numerics_setup.hpp"
#include "sim/strategies/training.hpp"

namespace dtsim::sim {
namespace {

// The part of the proxied workload's trained values a shard's messages carry.
double workload_share(uint64_t values, const TrainingContext& ctx) {
  return static_cast<double>(values) / static_cast<double>(ctx.compute.proxy_trained_values());
}

}  // namespace

ShardServer::ShardServer(int index, const TrainingContext& ctx, const PsConfig& config, const ParameterRange& range,
                         ShardedServerChannel& channel, PsJob& job, Hooks hooks, uint64_t proxy_values)
    : index_(index),
      ctx_(ctx),
      config_(config),
      range_(range),
      channel_(channel),
      job_(job),
      hooks_(std::move(hooks)),
      params_(ctx, range),
      parameter_bytes_(ctx.compute.proxied()
                           ? ctx.compute.proxy_weight_message(workload_share(proxy_values, ctx))
                           : range.size * gpu::storage_bytes(precision_settings(ctx.config()).weights)),
      gradient_bytes_(ctx.compute.proxied() ? ctx.compute.proxy_gradient_message(workload_share(proxy_values, ctx))
                                            : params_.wire_bytes()),
      outstanding_(static_cast<size_t>(ctx.config().workers)),
      reply_(static_cast<size_t>(ctx.config().workers)),
      said_goodbye_(static_cast<size_t>(ctx.config().workers), false) {
  if (config_.gradients_per_update > 1) collected_sum_ = gpu::Buffer<float>(ctx.ops, range.size);
}

void ShardServer::serve() {
  while (!finished()) {
    const std::vector<PushArrival> arrivals = channel_.receive_pushes_until(index_, next_transition_time());
    // Failures first: a message that reaches this shard at the instant its sender is cut off is lost too.
    apply_transitions(sg4::Engine::get_clock());
    serve_held();  // a failure may have released held pulls
    // One message at a time, as a server's loop takes them: the pull a push carries is served before the
    // next message of the same instant is looked at.
    for (const PushArrival& a : arrivals) {
      handle(a);
      serve_held();
    }
  }
  // n-softsync: what is left when the gradients run out is applied as a smaller average.
  if (!collected_.empty()) apply_collected();
  channel_.stop_serving(index_);
  hooks_.stopped(*this);
}

bool ShardServer::finished() const {
  const FaultSchedule& faults = ctx_.heterogeneity.faults();
  const double now = sg4::Engine::get_clock();
  for (int w = 0; w < ctx_.config().workers; ++w) {
    if (said_goodbye_[static_cast<size_t>(w)]) continue;
    // A worker that is down is waited for only if it will come back and there is work left for it.
    const bool down = faults.worker_down(w, now);
    if (down && (job_.tickets_left() == 0 || faults.worker_up_at(w, now) == kNever)) continue;
    return false;
  }
  return true;
}

double ShardServer::next_transition_time() const {
  const auto& all = ctx_.heterogeneity.faults().transitions();
  return transitions_done_ < all.size() ? all[transitions_done_].time : ShardedServerChannel::kNoDeadline;
}

void ShardServer::apply_transitions(double now) {
  const auto& all = ctx_.heterogeneity.faults().transitions();
  for (; transitions_done_ < all.size() && all[transitions_done_].time <= now; ++transitions_done_) {
    const FaultTransition& t = all[transitions_done_];
    if (t.down && !t.link) drop_worker(t.worker);
  }
}

void ShardServer::drop_worker(int worker) {
  Registration& reg = outstanding_[static_cast<size_t>(worker)];
  if (reg.active) ++dropped_;
  reg.active = false;
  held_.erase(std::remove_if(held_.begin(), held_.end(), [&](const HeldPull& h) { return h.worker == worker; }),
              held_.end());
  // A reply still in the worker's mailbox would otherwise reach it after it restarts.
  if (reply_[static_cast<size_t>(worker)]) reply_[static_cast<size_t>(worker)]->cancel();
  reply_[static_cast<size_t>(worker)] = nullptr;
}

void ShardServer::handle(const PushArrival& arrival) {
  const std::unique_ptr<ShardRequest> request = job_.requests.take(arrival.payload);
  if (!request) return;  // its worker was cut off while it travelled
  const int w = request->worker;
  if (ctx_.heterogeneity.faults().worker_down(w, sg4::Engine::get_clock())) return;
  if (request->has_gradient) accept_gradient(*request);
  switch (request->next) {
    case ShardRequest::Next::Nothing: break;
    case ShardRequest::Next::Params:
      said_goodbye_[static_cast<size_t>(w)] = false;  // back after a failure cut its goodbye short
      held_.push_back({w, request->next_computation, sg4::Engine::get_clock()});
      break;
    case ShardRequest::Next::Goodbye: said_goodbye_[static_cast<size_t>(w)] = true; break;
  }
}

void ShardServer::accept_gradient(ShardRequest& request) {
  Registration& reg = outstanding_[static_cast<size_t>(request.worker)];
  if (!reg.active || reg.computation != request.computation) {
    ++discarded_;  // its computation was dropped when the worker was cut off
    return;
  }
  reg.active = false;
  if (config_.gradients_per_update == 1)
    apply_one(request, reg.version);
  else
    collect(request, reg.version);
}

// trace.json's staleness counter: each update's (mean) staleness, from shard 0 (every shard sees each
// gradient, so one shard's count is the whole story).
void ShardServer::trace_staleness(double staleness) const {
  if (ctx_.trace == nullptr || index_ != 0) return;
  // The trace records steps (global batches of gradients, as the workers' spans count them), not updates.
  const int64_t step = version_ * config_.gradients_per_update / std::max(1, ctx_.config().workers);
  ctx_.trace->counter("staleness (updates behind)", sg4::Engine::get_clock(), staleness, step);
}

void ShardServer::apply_one(ShardRequest& request, int64_t pulled_version) {
  const int64_t staleness = version_ - pulled_version;
  const double factor = lr_factor(staleness);
  const double lr = params_.lr(schedule_step());
  params_.apply_scaled(request.gradient.data(), request.loss_scale, schedule_step(), factor);
  job_.staleness.applied(request.worker, index_, staleness, factor);
  trace_staleness(static_cast<double>(staleness));
  ++version_;
  ++gradients_applied_;
  hooks_.updated(*this, {request.batch_loss}, lr);
}

void ShardServer::collect(ShardRequest& request, int64_t pulled_version) {
  // Unscaled as it arrives: gradients of one update may have been computed with different loss scales.
  const float unscale = static_cast<float>(1.0 / request.loss_scale);
  if (collected_.empty()) {
    ctx_.ops.copy(collected_sum_.data(), request.gradient.data(), range_.size);
    if (unscale != 1.0f) ctx_.ops.scale(unscale, collected_sum_.data(), range_.size);
  } else {
    ctx_.ops.axpy(unscale, request.gradient.data(), collected_sum_.data(), range_.size);
  }
  collected_.push_back({request.worker, pulled_version, request.batch_loss});
  if (static_cast<int>(collected_.size()) == config_.gradients_per_update) apply_collected();
}

void ShardServer::apply_collected() {
  const size_t n = collected_.size();
  // Each gradient's staleness is counted when the update it joins is applied; the update's rate factor is
  // the mean of theirs (Zhang et al. divide by the mean staleness; the two agree when staleness is equal).
  double factor = 0.0;
  for (const Collected& c : collected_) factor += lr_factor(version_ - c.pulled_version);
  factor /= static_cast<double>(n);
  if (n > 1) ctx_.ops.scale(1.0f / static_cast<float>(n), collected_sum_.data(), range_.size);
  const double lr = params_.lr(schedule_step());
  params_.apply_scaled(collected_sum_.data(), 1.0, schedule_step(), factor);
  std::vector<double> losses;
  double staleness_sum = 0.0;
  for (const Collected& c : collected_) {
    job_.staleness.applied(c.worker, index_, version_ - c.pulled_version, factor);
    staleness_sum += static_cast<double>(version_ - c.pulled_version);
    losses.push_back(c.loss);
  }
  trace_staleness(staleness_sum / static_cast<double>(n));
  collected_.clear();
  ++version_;
  gradients_applied_ += static_cast<int64_t>(n);
  hooks_.updated(*this, losses, lr);
}

bool ShardServer::may_serve() const {
  if (!config_.bounded()) return true;
  int64_t outstanding = 0;
  int64_t oldest = 0;
  for (const Registration& r : outstanding_)
    if (r.active) {
      ++outstanding;
      oldest = std::max(oldest, version_ - r.version);
    }
  return outstanding == 0 || oldest + outstanding <= config_.staleness_bound;
}

void ShardServer::serve_held() {
  while (!held_.empty() && may_serve()) {
    const HeldPull pull = held_.front();
    held_.pop_front();
    serve(pull);
  }
  for (HeldPull& pull : held_) pull.blocked = true;
}

void ShardServer::serve(const HeldPull& pull) {
  // A pull the bound held counts, however briefly: even held for no time, it reads a newer version than it
  // would have (the pushes of the same instant land first).
  const double waited = sg4::Engine::get_clock() - pull.since;
  if (pull.blocked) job_.staleness.held(pull.worker, waited);
  auto reply = std::make_unique<ShardReply>();
  reply->computation = pull.computation;
  reply->version = version_;
  reply->snapshot = current_snapshot();
  reply->loss_scale = params_.numerics().loss_scale;
  const ShardPayload payload = job_.replies.send(pull.worker, std::move(reply), parameter_bytes_);
  reply_[static_cast<size_t>(pull.worker)] = channel_.send_pull(index_, pull.worker, payload);
  outstanding_[static_cast<size_t>(pull.worker)] = {true, pull.computation, version_};
}

ParameterSnapshot ShardServer::current_snapshot() {
  if (snapshot_version_ == version_)
    if (ParameterSnapshot alive = snapshot_.lock()) return alive;
  auto copy = std::make_shared<gpu::Buffer<float>>(ctx_.ops, range_.size);
  ctx_.ops.copy(copy->data(), params_.forward(), range_.size);
  snapshot_ = copy;
  snapshot_version_ = version_;
  return copy;
}

double ShardServer::lr_factor(int64_t staleness) const {
  return models::staleness_lr_factor(config_.staleness_lr, staleness, config_.staleness_exponent,
                                     config_.staleness_threshold);
}

int64_t ShardServer::schedule_step() const {
  return version_ * config_.gradients_per_update / ctx_.config().workers;
}

}  // namespace dtsim::sim
