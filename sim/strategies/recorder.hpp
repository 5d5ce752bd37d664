// Evaluation points: when they are due, the training loss accumulated since the last one, and the metrics.csv
// row each one becomes. Evaluation costs no simulated time.
#pragma once

#include <cstdint>

#include "models/network.hpp"

namespace dtsim::sim {

struct TrainingContext;

class TrainingRecorder {
 public:
  // `interval` applied steps between evaluations (and one at `total_steps`); `steps_per_epoch` converts
  // steps to epochs in the rows.
  TrainingRecorder(const TrainingContext& ctx, int64_t interval, int64_t total_steps, double steps_per_epoch);

  void add_train_loss(double mean_loss);
  bool due(int64_t applied_steps) const;
  // Evaluates `params` (backend memory) and records a row at the current simulated time.
  void record(int64_t applied_steps, const float* params, gpu::NumberFormat activations, double lr, uint64_t bytes_sent);

 private:
  const TrainingContext& ctx_;
  int64_t interval_;
  int64_t total_steps_;
  double steps_per_epoch_;
  double loss_sum_ = 0.0;
  int64_t loss_count_ = 0;
};

// The evaluation interval the scenario asks for: steps per epoch / eval.per_epoch, at least 1.
int64_t evaluation_interval(const TrainingContext& ctx);

}  // namespace dtsim::sim
