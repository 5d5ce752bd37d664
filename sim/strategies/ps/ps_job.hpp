// The asynchronous parameter server's bookkeeping shared by its workers and shards: how much work is left
// (gradient tickets), what each worker has in flight, the messages travelling, what failures cost, and
// which shards still serve.
//
// Run length: the job computes `gradients` gradients in all, as many mini-batches as synchronous training
// would consume in training.epochs (or max_steps) global steps. A worker takes a ticket before it asks for
// the parameters of a computation and gives it back when its gradient has reached every shard; a worker
// cut off by a failure returns the tickets it holds, so the work is done again by whoever takes them.
// Tickets are the job's length, not a protocol: a real trainer knows how many batches it is to process.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/strategies/metrics.hpp"
#include "sim/strategies/ps/ps_messages.hpp"
#include "sim/strategies/ps/ps_stats.hpp"

namespace dtsim::sim {

// One worker's state, which outlives its actor (a worker restarted after a failure continues from here).
struct WorkerLedger {
  struct Ticket {
    uint64_t computation = 0;
    bool computed = false;  // its gradient exists (a batch was consumed)
  };
  int64_t next_data_step = 0;      // the objective's per-worker step of its next gradient
  uint64_t next_computation = 1;   // computation numbers, per worker
  std::vector<Ticket> tickets;     // the computations it holds
  bool said_goodbye = false;       // it took no more work and left
  WorkerTime time;                 // idle is filled in at the end

  int64_t gradients_lost = 0;  // computed, then lost to a failure before reaching every shard
  int64_t pulls_lost = 0;      // asked for, then lost to a failure before the gradient existed
  int restarts = 0;
  double away_s = 0.0;
  double down_since = -1.0;
};

class PsJob {
 public:
  PsJob(int workers, int shards, int64_t gradients);

  int64_t gradients() const { return gradients_; }
  int64_t tickets_left() const { return tickets_left_; }
  // Takes a ticket for `computation` of `worker`; false when none is left.
  bool take_ticket(int worker, uint64_t computation);
  void mark_computed(int worker, uint64_t computation);
  // The computation's gradient reached every shard.
  void ticket_spent(int worker, uint64_t computation);

  // `worker`'s host went down at `time` / came back: tickets go back, its messages are dropped, time away
  // is counted. Called from the fault listener (kernel context: no blocking).
  void cut_off(int worker, double time);
  void back_up(int worker, double time);

  bool shard_serving(int shard) const { return serving_.at(static_cast<size_t>(shard)); }
  // Returns whether it was the last shard to stop: the job is then complete.
  bool shard_stopped(int shard);
  bool complete() const { return shards_serving_ == 0; }

  WorkerLedger& worker(int w) { return workers_.at(static_cast<size_t>(w)); }
  const WorkerLedger& worker(int w) const { return workers_.at(static_cast<size_t>(w)); }
  int num_workers() const { return static_cast<int>(workers_.size()); }

  MessageStore<ShardRequest> requests;
  MessageStore<ShardReply> replies;
  StalenessStats staleness;

 private:
  int64_t gradients_;
  int64_t tickets_left_;
  std::vector<WorkerLedger> workers_;
  std::vector<bool> serving_;
  int shards_serving_;
};

}  // namespace dtsim::sim
