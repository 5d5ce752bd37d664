// Synchronous data parallel and local SGD.
//
// sync: every step each worker computes the gradient of its batch (optionally accumulated over
//   micro-batches); backward hands the gradient to the worker's communication stream bucket by bucket, so
//   allreduces overlap with the rest of backward; once every bucket is reduced, one update is applied to the
//   single shared copy of the parameters (all replicas are identical, so one copy serves every worker).
// local: each worker keeps its own model and takes H local optimizer steps on it between two model
//   averagings (an allreduce of the parameters). Post-local SGD trains synchronously for the first
//   local.sync_until_step steps. With H = 1 averaging after every step is synchronous SGD, and it runs as
//   such (gradients averaged before the update), so the two are identical bit for bit.
//
// Compression (sync_compression.hpp): with compression.kind set, each worker encodes its gradient as soon as
// it exists, the bucket streams carry the encoding's bytes, and the update uses the group's decoded average.
// Local SGD's model averages travel uncompressed.
//
// Failures (sync only; sync_recovery.cpp): when a worker's host or link fails, the others notice after
// sync.fault_timeout; then either the survivors continue without it (elastic) or the job restarts from its
// last checkpoint once the node is back (restart), checkpoints having cost their write time all along.
#pragma once

#include <memory>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/strategies/sync/buckets.hpp"
#include "sim/strategies/sync/weight_gathers.hpp"
#include "sim/strategies/parameters.hpp"
#include "sim/strategies/recorder.hpp"
#include "sim/strategies/sync/sync_compression.hpp"
#include "sim/strategies/training.hpp"

namespace dtsim::sim {

class SyncDataParallel final : public TrainingStrategy {
 public:
  explicit SyncDataParallel(const TrainingContext& ctx);

  void spawn() override;
  StrategyOutcome outcome() const override;

 private:
  struct Worker {
    gpu::Buffer<float> grads;  // empty when gradients are deferred (see deferred_gradients_)
    gpu::Buffer<float> micro;  // one micro-batch's gradient, when accumulating
    double batch_loss = 0.0;   // mean loss of this worker's batch in the current step
    double compute_end = 0.0;  // simulated time its current step's compute finished
    double loss_sum = 0.0;     // local SGD: losses since the last averaging
    int64_t loss_count = 0;
    double gather_wait = 0.0;  // ZeRO-3: this step's waits for weight gathers so far
    double checkpoint_s = 0.0; // time spent writing checkpoints (idle in summary.json, a span of its own)
    WorkerTime time;
  };

  // rank's loop from `first_step` on, in the current incarnation of the job (`slot`: its position in active_).
  void worker(int rank, int slot, int64_t first_step);
  // Starts an incarnation: the group of active workers, its collectives and actors, from `first_step`.
  void launch(int64_t first_step);
  // sync_recovery.cpp: the fault listener, the actor that handles a failure, and checkpoints.
  void watch_faults();
  void on_failure(int rank);
  void start_recovery_actor();
  bool worker_up(int rank, double now) const;  // its host on and its link reachable
  void recover();
  void checkpoint_if_due(int rank, int64_t applied);
  // The real gradient of rank's batch for `step` (all micro-batches) at `params`, into gradient_of(rank).
  void compute_gradient(int rank, int64_t step, const TrainableParameters& params);
  Worker& gradient_of(int rank) { return deferred_gradients_ ? shared_gradient_ : workers_[rank]; }
  // A gradient-averaging step: backward in buckets handed to the stream, then the update.
  void synchronous_step(int rank, int slot, int64_t step, double multiplier, double start);
  // A local step: backward, the worker's own update, and a model average when one is due.
  void local_step(int rank, int64_t step, double multiplier, double start);
  void apply_gradient_average(int64_t step);  // once per step, in the first worker out of the allreduce
  void apply_model_average(int64_t step);     // once per averaging, likewise
  void account_wait(Worker& w);               // idle and communication time after a collective
  double bucket_work(int rank, int bucket) const;  // backward work before the bucket is ready on rank's GPU
  double unit_forward(int rank, int unit) const;   // ZeRO-3: forward work of a unit's layers on rank's GPU
  void forward(Worker& w, int rank, int slot, int64_t step, double multiplier);
  void update(Worker& w, int rank, double multiplier, int64_t step);  // the optimizer step on rank's replica (its shard: ZeRO)
  // trace.json: the step's compute, its wait for the slowest peer and its exchange (allreduce or model average).
  void trace_exchange(int rank, const Worker& w, double start, int64_t step, const char* exchange);
  void gather_weights(Worker& w, int rank);             // ZeRO: all-gather the updated weights
  void record_if_due(int64_t applied, int64_t step);
  // Local SGD's model average: the replica at its wire width (in a proxy run, the workload's trained weights).
  uint64_t averaged_bytes() const;
  double checkpoint_bytes() const;  // what a checkpoint writes and a restart reads back
  // Fidelity auto's stepwise budget per collective call in a run with numerics (CollectiveOptions::
  // auto_stepwise_cap) for `calls_per_step` calls a step; 0 (no cap) where other traffic or faults are simulated.
  uint64_t auto_stepwise_cap(size_t calls_per_step) const;
  bool gradient_averaging(int64_t step) const;
  bool model_averaging_after(int64_t step) const;
  TrainableParameters& replica(int rank) { return *replicas_[local_ ? rank : 0]; }
  // Evaluated model: the shared one, or the average of the local ones.
  const float* evaluated_params();

  TrainingContext ctx_;
  bool local_;
  int micro_batches_;
  int64_t total_steps_;
  bool zero_;                 // sync.zero_stage > 0: reduce-scatter buckets, all-gather the weights
  bool zero3_;                // stage 3: the weights gathered unit by unit in forward and backward
  uint64_t weight_bytes_ = 0; // the weights at their storage width: what ZeRO's all-gather moves
  std::vector<std::unique_ptr<TrainableParameters>> replicas_;  // one (sync) or one per worker (local)
  TrainingRecorder recorder_;
  gpu::Buffer<float> mean_;  // averaged gradient or parameters
  gpu::Buffer<float> scratch_;
  std::vector<Worker> workers_;
  // Plain synchronous data parallelism (no compression, no local SGD, no faults) needs no worker's gradient
  // before the average: every worker computes at the same parameters, and each rank's batches are drawn in
  // step order either way. So the gradients are computed when the average is formed, one rank after
  // another into one buffer, in the same rank order and arithmetic as with a buffer per worker: memory stays
  // flat in the number of workers and the results are identical.
  bool deferred_gradients_ = false;
  Worker shared_gradient_;  // the one gradient (and micro-batch) buffer when deferred
  std::unique_ptr<BucketStreams> streams_;
  std::unique_ptr<Collective> param_allreduce_;  // local SGD's model averaging
  std::unique_ptr<Collective> param_gather_;     // ZeRO 1-2: the updated weights' all-gather
  std::unique_ptr<WeightGathers> weight_gathers_;  // ZeRO-3: each unit's weights, before forward and backward
  std::unique_ptr<SyncGradientCompression> compression_;  // when compression.kind is not none
  std::vector<double> bucket_bytes_per_value_;   // wire width, for rebuilding the streams

  // Membership and failures.
  std::vector<int> active_;           // ranks of the current incarnation, ascending
  Platform group_;                    // the active workers as a platform of their own (collectives run on it)
  std::vector<std::unique_ptr<BucketStreams>> retired_streams_;  // old incarnations' (their actors are gone)
  std::vector<sg4::ActorPtr> actors_;  // the current incarnation's workers and streams
  int incarnation_ = 0;
  bool recovering_ = false;
  double recovery_began_ = 0.0;                      // the failure that started the recovery under way
  simgrid::s4u::Host* recovery_host_ = nullptr;      // where its actor runs
  bool recovery_waits_for_a_host_ = false;           // every worker was down when it had to start
  std::vector<int> failed_;           // workers lost since the last recovery began
  std::unique_ptr<TrainableParameters> checkpoint_;  // the last checkpoint whose write has finished
  int64_t checkpoint_step_ = 0;
  int64_t checkpoints_written_ = 0;
  // The checkpoint being written: a restart can read it only if its write ended before the failure.
  std::unique_ptr<TrainableParameters> writing_;
  int64_t writing_step_ = -1;
  double writing_done_at_ = 0.0;
  // Worker-steps the failed workers missed (their share of a step's global batch, not trained on), in all
  // and as of each checkpoint: epochs count the samples the model was trained on.
  int64_t missed_worker_steps_ = 0;
  int64_t checkpoint_missed_ = 0;
  int64_t writing_missed_ = 0;
  double epochs_trained() const;
  void settle_checkpoint(double now);  // the write in progress becomes the checkpoint once it has ended
  bool write_finished(double now) const { return writing_step_ > checkpoint_step_ && writing_done_at_ <= now; }
  nlohmann::json fault_reports_ = nlohmann::json::array();
  int64_t step_at_failure_ = -1;      // restart: the step to catch up with after the rollback
  size_t report_waiting_catch_up_ = 0;
  uint64_t collective_bytes_retired_ = 0;
  int64_t applied_steps_ = 0;      // steps every worker has completed and whose update exists
  int64_t last_recorded_ = 0;
  uint64_t bytes_so_far_ = 0;
  double last_ready_ = 0.0;        // when the slowest worker of the current step finished computing
  int64_t model_averagings_ = 0;
  ActorFailure failure_;
};

// The setup line's words for sync and local (see describe_strategy).
std::string describe_sync_data_parallel(const RunConfig& config);

}  // namespace dtsim::sim
