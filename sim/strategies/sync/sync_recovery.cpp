// How synchronous training survives a failed worker: the fault listener, the recovery actor, checkpoints.
//
// A failure takes a worker's host or link down at time t; its actors die there and then, and the transfers
// of its peers fail or hang. The survivors give up on it after sync.fault_timeout (NCCL's watchdog); then:
// - elastic: the job goes on with the survivors from the step that was in progress (its gradients are
//   lost); the failed worker's data is no longer seen and the global batch shrinks with the group;
// - restart: the job waits for the node (at least sync.restart_time), reads back its last checkpoint and
//   redoes the steps since then. Checkpoints cost every worker their write time all along, and one whose
//   write a failure interrupts is not there to read back (the restart goes back to the one before). If the node
//   never comes back, the job continues elastically instead and the report says so.
// Every recovery is reported in summary.json: when it failed, was detected and resumed, how many workers
// remain, steps rolled back, and test accuracy just before the failure and on resuming.
#include <algorithm>

#include "sim/strategies/sync/sync_dp.hpp"

namespace dtsim::sim {

void SyncDataParallel::watch_faults() {
  if (ctx_.config().sync.fault_reaction == FaultReaction::Restart) {
    checkpoint_ = std::make_unique<TrainableParameters>(ctx_);
    checkpoint_->copy_from(*replicas_[0]);  // the initial state is the first checkpoint, already on disk
  }
  ctx_.heterogeneity.on_fault([this](const FaultTransition& t) {
    if (applied_steps_ >= total_steps_) return;
    if (!t.down) {  // a worker is back: it can host a recovery that found every worker down
      if (recovery_waits_for_a_host_) start_recovery_actor();
      return;
    }
    if (std::find(active_.begin(), active_.end(), t.worker) == active_.end()) return;
    on_failure(t.worker);
  });
}

void SyncDataParallel::on_failure(int rank) {
  // Called in SimGrid's kernel context at the failure's exact time: only flags and a new actor here.
  if (std::find(failed_.begin(), failed_.end(), rank) == failed_.end()) failed_.push_back(rank);
  // (A failed link leaves the recovery actor running on its host.)
  const bool lost_its_host = recovering_ && recovery_host_ == ctx_.platform.workers[rank] && !recovery_host_->is_on();
  if (recovering_ && !lost_its_host) return;
  if (!recovering_) {
    recovering_ = true;
    recovery_began_ = sg4::Engine::get_clock();
    streams_->tolerate_failures();
  }
  // The recovery actor runs on a worker that is up; one whose host fails with it starts again on another.
  start_recovery_actor();
}

bool SyncDataParallel::worker_up(int rank, double now) const {
  return ctx_.platform.workers[static_cast<size_t>(rank)]->is_on() && ctx_.heterogeneity.faults().reachable(rank, now);
}

void SyncDataParallel::start_recovery_actor() {
  const double now = sg4::Engine::get_clock();
  recovery_host_ = nullptr;
  for (size_t r = 0; r < workers_.size() && !recovery_host_; ++r)
    if (worker_up(static_cast<int>(r), now)) recovery_host_ = ctx_.platform.workers[r];
  // Every worker is down: the job waits for one to return (the listener above), or, if none does, ends there
  // (and the run reports that every worker failed).
  recovery_waits_for_a_host_ = recovery_host_ == nullptr;
  ctx_.heterogeneity.wait_for_a_worker(recovery_waits_for_a_host_);
  if (recovery_waits_for_a_host_) return;
  sg4::Actor::create("recovery" + std::to_string(incarnation_), recovery_host_, [this] { recover(); });
}

void SyncDataParallel::recover() {
  // A recovery started again (its first host failed too, or every worker was down) still counts from the
  // first failure and detects it fault_timeout after it.
  const double failed_at = recovery_began_;
  streams_->abandon();
  if (param_allreduce_) param_allreduce_->abandon();
  for (const sg4::ActorPtr& a : actors_)
    if (const sg4::ActorPtr alive = sg4::Actor::by_pid(a->get_pid())) alive->kill();
  actors_.clear();
  // The model as the failure found it (the last evaluation row may be many steps older).
  const double accuracy_before =
      ctx_.objective.evaluate(replicas_[0]->forward(), replicas_[0]->numerics().activations).accuracy;
  const int64_t step_at_failure = applied_steps_;
  const SyncConfig& cfg = ctx_.config().sync;
  sg4::this_actor::sleep_until(std::max(sg4::Engine::get_clock(), failed_at + cfg.fault_timeout_s));

  nlohmann::json report;
  report["failed_at_s"] = failed_at;
  report["detected_at_s"] = sg4::Engine::get_clock();
  report["step"] = step_at_failure;
  FaultReaction reaction = cfg.fault_reaction;
  if (reaction == FaultReaction::Restart) {
    // Wait for every failed worker, then read the checkpoint back. A worker that fails meanwhile joins this
    // recovery (on_failure adds it to failed_): it is waited for too, and the checkpoint read again once it is
    // back (launching on a host that is down would abort the simulation).
    const auto all_back = [&] {
      const double now = sg4::Engine::get_clock();
      return std::all_of(failed_.begin(), failed_.end(), [&](int r) { return worker_up(r, now); });
    };
    double earliest = sg4::Engine::get_clock() + cfg.restart_s;
    bool restored = false;
    while (!restored) {
      double back = sg4::Engine::get_clock();
      for (const int r : failed_)
        back = std::max({back, ctx_.heterogeneity.faults().worker_up_at(r, back),
                         ctx_.heterogeneity.faults().link_up_at(r, back)});
      if (back == kNever) break;
      sg4::this_actor::sleep_until(std::max(back, earliest));
      earliest = 0.0;
      if (!all_back()) continue;
      sg4::this_actor::sleep_for(checkpoint_bytes() / cfg.checkpoint_bandwidth);
      restored = all_back();
    }
    if (!restored) {
      reaction = FaultReaction::Elastic;
      report["note"] = "the failed node never returns: continued without it";
    } else {
      settle_checkpoint(failed_at);
      writing_step_ = -1;  // a write the failure cut short is lost
      replicas_[0]->copy_from(*checkpoint_);
      applied_steps_ = checkpoint_step_;
      missed_worker_steps_ = checkpoint_missed_;
      last_recorded_ = std::min(last_recorded_, applied_steps_);
      step_at_failure_ = step_at_failure;
      report_waiting_catch_up_ = fault_reports_.size() + 1;
      report["steps_rolled_back"] = step_at_failure - checkpoint_step_;
    }
  }
  if (reaction == FaultReaction::Elastic) {
    for (const int r : failed_) active_.erase(std::remove(active_.begin(), active_.end(), r), active_.end());
    report["steps_rolled_back"] = 0;
  }
  // Every worker this recovery handled, those that failed while it waited included.
  std::vector<int> handled = failed_;
  std::sort(handled.begin(), handled.end());
  report["workers"] = handled;
  report["reaction"] = to_string(reaction);
  report["resumed_at_s"] = sg4::Engine::get_clock();
  if (ctx_.trace)  // every worker's wait, counted as idle in summary.json (outcome())
    for (size_t r = 0; r < workers_.size(); ++r)
      ctx_.trace->span(static_cast<int>(r), "recovery", "idle", failed_at, sg4::Engine::get_clock(), step_at_failure);
  report["workers_after"] = active_.size();
  report["accuracy_before"] = accuracy_before;
  report["accuracy_on_resuming"] =
      ctx_.objective.evaluate(replicas_[0]->forward(), replicas_[0]->numerics().activations).accuracy;
  report["time_lost_s"] = sg4::Engine::get_clock() - failed_at;  // restart: updated once caught up
  fault_reports_.push_back(report);
  failed_.clear();
  recovering_ = false;
  ++incarnation_;
  if (active_.empty()) return;  // nobody left to train
  launch(applied_steps_);
}

double SyncDataParallel::checkpoint_bytes() const {
  // A proxy run saves the workload's state, not the small model's.
  return ctx_.compute.proxied() ? ctx_.compute.proxy_checkpoint_bytes()
                                : static_cast<double>(checkpoint_->checkpoint_bytes());
}

void SyncDataParallel::checkpoint_if_due(int rank, int64_t applied) {
  const SyncConfig& cfg = ctx_.config().sync;
  if (!checkpoint_) return;
  const int64_t every = cfg.checkpoint_every > 0 ? cfg.checkpoint_every : ctx_.inputs.length.steps_per_epoch;
  if (every <= 0 || applied % every != 0 || applied >= total_steps_) return;
  // The first worker past the step saves the state; every worker spends the write time (a synchronous save).
  const double write_s = checkpoint_bytes() / cfg.checkpoint_bandwidth;
  if (checkpoint_step_ < applied && writing_step_ < applied) {
    const double now = sg4::Engine::get_clock();
    settle_checkpoint(now);
    if (!writing_) writing_ = std::make_unique<TrainableParameters>(ctx_);
    writing_->copy_from(*replicas_[0]);
    writing_step_ = applied;
    writing_missed_ = missed_worker_steps_;
    writing_done_at_ = now + write_s;
  }
  const double start = sg4::Engine::get_clock();
  sg4::this_actor::sleep_for(write_s);
  workers_[rank].checkpoint_s += sg4::Engine::get_clock() - start;
  if (ctx_.trace) ctx_.trace->span(rank, "checkpoint write", "idle", start, sg4::Engine::get_clock(), applied);
}

void SyncDataParallel::settle_checkpoint(double now) {
  if (!write_finished(now)) return;
  std::swap(checkpoint_, writing_);
  checkpoint_step_ = writing_step_;
  checkpoint_missed_ = writing_missed_;
  writing_step_ = -1;
  ++checkpoints_written_;
}

}  // namespace dtsim::sim
