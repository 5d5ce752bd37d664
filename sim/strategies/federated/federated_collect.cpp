// The server's side of a round: waiting for reports, and deciding from simulated time alone which client's
// work is kept (the first K to report), which is too late (deadline, over-commit) and which is lost (its host
// or link went down, or it went offline).
#include <algorithm>
#include <cmath>

#include "sim/strategies/federated/federated.hpp"

namespace dtsim::sim {
namespace {

// SimGrid wakes a timed wait at start + (target − start), which can miss the target by an ulp; anything
// within this of a deadline or a loss time counts as having reached it.
bool reached(double now, double t) { return now >= t - 1e-9 * std::max(1.0, std::fabs(t)); }

}  // namespace

void FederatedLearning::stop(ClientRun& run, ClientFate fate) {
  if (run.fate == ClientFate::Pending) run.fate = fate;
  run.cancelled = true;
  // The client may be waiting on a transfer or a computation; cancelling it wakes the client, which sees
  // `cancelled` and leaves. One that already ended (or whose host failed) has nothing left to cancel.
  if (run.current && run.current->get_state() == sg4::Activity::State::STARTED) run.current->cancel();
}

void FederatedLearning::collect(std::vector<std::unique_ptr<ClientRun>>& runs, int keep, double round_start) {
  const bool hard_deadline = fl_.deadline > 0 && fl_.straggler_policy == StragglerPolicy::Drop;
  const double deadline = fl_.deadline > 0 ? round_start + fl_.deadline : kNever;
  int kept = 0;
  std::unique_lock<sg4::Mutex> lock(*mutex_);
  while (true) {
    // Reports that arrived since the last look, in arrival order; reports at the same instant by client id.
    std::vector<ClientRun*> arrived;
    for (auto& r : runs)
      if (r->reports && r->reported && r->fate == ClientFate::Pending) arrived.push_back(r.get());
    std::sort(arrived.begin(), arrived.end(), [](const ClientRun* a, const ClientRun* b) {
      return a->report_time != b->report_time ? a->report_time < b->report_time : a->work.client < b->work.client;
    });
    for (ClientRun* r : arrived) {
      if (r->steps_done == 0)
        r->fate = ClientFate::DroppedDeadline;  // partial policy: no step finished before the deadline
      else if (kept < keep) {
        r->fate = r->steps_done < r->full_steps ? ClientFate::Partial : ClientFate::Aggregated;
        ++kept;
      } else {
        r->fate = ClientFate::DroppedOvercommit;
      }
    }

    const double now = sg4::Engine::get_clock();
    std::vector<ClientRun*> waiting;
    for (auto& r : runs) {
      if (!r->reports || r->fate != ClientFate::Pending) continue;
      if (r->failed || reached(now, r->lost_at))
        stop(*r, ClientFate::Lost);
      else
        waiting.push_back(r.get());
    }
    if (waiting.empty()) break;
    if (kept >= keep) {
      for (ClientRun* r : waiting) stop(*r, ClientFate::DroppedOvercommit);
      break;
    }
    if (hard_deadline && reached(now, deadline)) {
      for (ClientRun* r : waiting) stop(*r, ClientFate::DroppedDeadline);
      break;
    }
    double wake = hard_deadline ? deadline : kNever;
    for (const ClientRun* r : waiting) wake = std::min(wake, r->lost_at);
    if (std::isfinite(wake))
      reported_->wait_until(lock, wake);
    else
      reported_->wait(lock);
  }
  // Protocol stragglers under the drop policy were never waited for; whatever they still do is abandoned.
  for (auto& r : runs)
    if (!r->reports) stop(*r, ClientFate::DroppedStraggler);
}

}  // namespace dtsim::sim
