#include "sim/strategies/ps/ps_job.hpp"

#include <algorithm>
#include <stdexcept>

namespace dtsim::sim {

PsJob::PsJob(int workers, int shards, int64_t gradients)
    : staleness(workers),
      gradients_(gradients),
      tickets_left_(gradients),
      workers_(static_cast<size_t>(workers)),
      serving_(static_cast<size_t>(shards), true),
      shards_serving_(shards) {}

bool PsJob::take_ticket(int w, uint64_t computation) {
  if (tickets_left_ <= 0) return false;
  --tickets_left_;
  worker(w).tickets.push_back({computation, false});
  return true;
}

void PsJob::mark_computed(int w, uint64_t computation) {
  for (WorkerLedger::Ticket& t : worker(w).tickets)
    if (t.computation == computation) t.computed = true;
}

void PsJob::ticket_spent(int w, uint64_t computation) {
  std::vector<WorkerLedger::Ticket>& tickets = worker(w).tickets;
  const auto it = std::find_if(tickets.begin(), tickets.end(),
                               [&](const WorkerLedger::Ticket& t) { return t.computation == computation; });
  if (it == tickets.end()) throw std::logic_error("parameter server: a gradient without a ticket");
  tickets.erase(it);
}

void PsJob::cut_off(int w, double time) {
  WorkerLedger& me = worker(w);
  for (const WorkerLedger::Ticket& t : me.tickets) ++(t.computed ? me.gradients_lost : me.pulls_lost);
  tickets_left_ += static_cast<int64_t>(me.tickets.size());
  me.tickets.clear();
  me.down_since = time;
  requests.discard_worker(w);
  replies.discard_worker(w);
}

void PsJob::back_up(int w, double time) {
  WorkerLedger& me = worker(w);
  if (me.down_since >= 0) me.away_s += time - me.down_since;
  me.down_since = -1.0;
}

bool PsJob::shard_stopped(int shard) {
  if (!serving_.at(static_cast<size_t>(shard))) throw std::logic_error("parameter server: a shard stopped twice");
  serving_[static_cast<size_t>(shard)] = false;
  return --shards_serving_ == 0;
}

}  // namespace dtsim::sim
