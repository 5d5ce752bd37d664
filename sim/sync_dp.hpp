// Synchronous data parallel: every step, each worker computes the gradient of its shard of the global
// batch, the gradients are averaged by an allreduce, and one update is applied to the single shared copy
// of the parameters (all replicas are identical, so one copy serves every worker).
#pragma once

#include <memory>
#include <vector>

#include "models/batch_schedule.hpp"
#include "models/evaluation.hpp"
#include "models/loss_scaler.hpp"
#include "models/lr_schedule.hpp"
#include "models/mixed_precision.hpp"
#include "models/optimizer.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/stragglers.hpp"
#include "sim/training.hpp"

namespace dtsim::sim {

class SyncDataParallel {
 public:
  explicit SyncDataParallel(const TrainingContext& ctx);

  // Creates one actor per worker on its host; call before Engine::run().
  void spawn();
  // After Engine::run(): what happened (rethrows an error raised inside an actor).
  StrategyOutcome outcome() const;

  int64_t total_steps() const { return total_steps_; }

 private:
  struct Worker {
    models::Workspace<float> workspace;
    gpu::Buffer<float> grads;
    std::vector<int32_t> batch_indices;
    std::vector<float> batch_features;
    std::vector<int32_t> batch_labels;
    double batch_loss = 0.0;   // mean loss of this worker's shard in the current step
    double compute_end = 0.0;  // simulated time its current step's compute finished
    WorkerTime time;
  };

  void worker(int rank);
  // This worker's samples for `step`: its slice of the shared global batch, or the next batch of its shard.
  void draw_batch(int64_t step, int rank);
  void apply_update(int64_t step);  // runs once per step, in the first worker to finish the allreduce
  void evaluate(int64_t step);
  // Rounds the fp32 master weights into the copy the forward pass reads (when weights are not fp32).
  void refresh_working_params();
  const float* forward_params() const { return working_params_.empty() ? params_.data() : working_params_.data(); }

  TrainingContext ctx_;
  models::BatchSchedule global_order_;
  std::vector<models::ShardSampler> shard_samplers_;  // one per worker when the data is partitioned
  models::LrSchedule lr_schedule_;
  models::PrecisionSettings precision_;
  models::LossScaler loss_scaler_;
  int64_t total_steps_;
  int64_t eval_interval_;
  double flops_per_worker_step_;
  uint64_t grad_bytes_;
  StragglerModel stragglers_;  // random per-step slowdowns (slow hosts are slower hosts already)

  gpu::Buffer<float> params_;          // fp32 master weights, one copy for all replicas
  gpu::Buffer<float> working_params_;  // their rounded copy when precision.weights is not fp32
  gpu::Buffer<float> mean_grad_;
  std::unique_ptr<models::Optimizer<float>> optimizer_;
  std::vector<Worker> workers_;
  std::unique_ptr<Collective> allreduce_;  // collective.algorithm and .fidelity
  models::Workspace<float> eval_workspace_;

  int64_t applied_steps_ = 0;
  double last_ready_ = 0.0;  // when the slowest worker of the current step finished computing
  double train_loss_sum_ = 0.0;
  int64_t train_loss_count_ = 0;
  ActorFailure failure_;
};

}  // namespace dtsim::sim
