// One shard of the asynchronous parameter server: the actor on a server host that owns a contiguous range
// of the model's tensors (their master weights, optimizer state, schedule and loss scaler) and serves it.
//
// What it does, in the order the simulated network delivers messages (pushes that arrive at the same instant
// are taken in worker rank order):
// - A gradient slice from a computation it served is applied at once (or, with n-softsync, collected until
//   k are there and their average applied). Its staleness is the number of updates this shard applied
//   between serving that computation's pull and applying the gradient.
// - A pull is served with the shard's current parameters: a snapshot of this version, shared by every pull
//   served at it. Under bounded staleness s the shard holds pulls (first come, first served) while
//       max over outstanding computations c of (version − version(c)) + #outstanding  >  s,
//   i.e. while one more computation could let an outstanding one be applied more than s updates after its
//   pull. That expression is what an outstanding gradient's staleness can still grow to (each other
//   outstanding or new computation can be applied before it, one update each); applying an update keeps it
//   for the others (version + 1, one fewer outstanding) and serving only happens when it stays ≤ s, so no
//   gradient is ever applied staler than s. Pushes are never refused, and a pull is held only while some
//   computation is outstanding, whose push will come or whose worker's failure drops it; so the shard
//   cannot deadlock. With several shards a worker pulls them one after the other in shard order under a
//   bound: a worker held at shard j is outstanding only at lower shards, and the computations holding it
//   are outstanding at j, so they belong to workers that are computing, pushing or held at higher
//   shards; following that chain upwards ends at a worker that is computing, so no cycle of waits forms.
// - A worker cut off by its host's failure loses what it had in flight here: its outstanding computation
//   and any held pull are dropped and a reply on its way is cancelled, at the failure's exact time (the
//   shard wakes up for every fault transition; an ideal failure detector).
// It stops when every worker has said goodbye or is cut off with nothing left for it to redo.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "sim/collectives/parameter_server.hpp"
#include "sim/config/ps_config.hpp"
#include "sim/strategies/parameters.hpp"
#include "sim/strategies/ps/ps_job.hpp"

namespace dtsim::sim {

struct TrainingContext;

class ShardServer {
 public:
  struct Hooks {
    // After every update: the losses of the gradients it applied and the learning rate (before the
    // staleness factor) it used.
    std::function<void(const ShardServer&, const std::vector<double>& losses, double lr)> updated;
    std::function<void(const ShardServer&)> stopped;
  };

  // `proxy_values`: in a proxy run, the proxied workload's trained values this shard's messages carry (its
  // share of the workload's layers, ps_partition.hpp); ignored otherwise.
  ShardServer(int index, const TrainingContext& ctx, const PsConfig& config, const ParameterRange& range,
              ShardedServerChannel& channel, PsJob& job, Hooks hooks, uint64_t proxy_values = 0);

  // The actor body.
  void serve();

  int index() const { return index_; }
  const ParameterRange& range() const { return range_; }
  const TrainableParameters& params() const { return params_; }
  int64_t version() const { return version_; }                 // updates applied
  int64_t gradients_applied() const { return gradients_applied_; }
  int64_t discarded_gradients() const { return discarded_; }   // from computations dropped at a failure
  int64_t dropped_computations() const { return dropped_; }
  // A dense push of this shard's slice on the wire (in a proxy run, its layers of the workload's gradients).
  uint64_t gradient_bytes() const { return gradient_bytes_; }

 private:
  struct Registration {
    bool active = false;
    uint64_t computation = 0;
    int64_t version = 0;  // the version its pull was served at
  };
  struct HeldPull {
    int worker;
    uint64_t computation;
    double since;
    bool blocked = false;  // the bound stopped it at least once (for no time, if a push of the same instant freed it)
  };
  struct Collected {  // a gradient waiting in the n-softsync buffer
    int worker;
    int64_t pulled_version;
    double loss;
  };

  bool finished() const;
  double next_transition_time() const;
  void apply_transitions(double now);
  void drop_worker(int worker);
  void handle(const PushArrival& arrival);
  void accept_gradient(ShardRequest& request);
  void apply_one(ShardRequest& request, int64_t pulled_version);
  void trace_staleness(double staleness) const;
  void collect(ShardRequest& request, int64_t pulled_version);
  void apply_collected();
  void serve_held();
  bool may_serve() const;
  void serve(const HeldPull& pull);
  ParameterSnapshot current_snapshot();
  double lr_factor(int64_t staleness) const;
  // The schedule's step for the next update: the synchronous step that has consumed as many samples.
  int64_t schedule_step() const;

  int index_;
  const TrainingContext& ctx_;
  PsConfig config_;
  ParameterRange range_;
  ShardedServerChannel& channel_;
  PsJob& job_;
  Hooks hooks_;
  TrainableParameters params_;
  uint64_t parameter_bytes_;  // a pull's reply
  uint64_t gradient_bytes_;

  int64_t version_ = 0;
  int64_t gradients_applied_ = 0;
  int64_t discarded_ = 0;
  int64_t dropped_ = 0;
  std::vector<Registration> outstanding_;   // per worker: a worker has at most one computation here
  std::deque<HeldPull> held_;
  std::vector<simgrid::s4u::CommPtr> reply_;  // per worker: the last reply sent
  std::vector<bool> said_goodbye_;
  size_t transitions_done_ = 0;

  std::weak_ptr<const gpu::Buffer<float>> snapshot_;
  int64_t snapshot_version_ = -1;

  gpu::Buffer<float> collected_sum_;  // n-softsync: Σ unscaled gradients
  std::vector<Collected> collected_;
};

}  // namespace dtsim::sim
