// Synchronous data parallel: every step, each worker computes the gradient of its shard of the global
// batch, the gradients are averaged by an allreduce, and one update is applied to the single shared copy
// of the parameters (all replicas are identical, so one copy serves every worker).
#pragma once

#include <memory>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/strategies/parameters.hpp"
#include "sim/strategies/recorder.hpp"
#include "sim/training.hpp"

namespace dtsim::sim {

class SyncDataParallel final : public Strategy {
 public:
  explicit SyncDataParallel(const TrainingContext& ctx);

  std::string name() const override { return "sync"; }
  void spawn() override;
  StrategyOutcome outcome() const override;

 private:
  struct Worker {
    gpu::Buffer<float> grads;
    double batch_loss = 0.0;   // mean loss of this worker's batch in the current step
    double compute_end = 0.0;  // simulated time its current step's compute finished
    WorkerTime time;
  };

  void worker(int rank);
  void apply_update(int64_t step);  // runs once per step, in the first worker to finish the allreduce

  TrainingContext ctx_;
  int64_t total_steps_;
  double flops_per_worker_step_;
  TrainableParameters params_;
  TrainingRecorder recorder_;
  gpu::Buffer<float> mean_grad_;
  std::vector<Worker> workers_;
  std::unique_ptr<Collective> allreduce_;  // collective.algorithm and .fidelity

  int64_t applied_steps_ = 0;
  double last_ready_ = 0.0;  // when the slowest worker of the current step finished computing
  ActorFailure failure_;
};

}  // namespace dtsim::sim
