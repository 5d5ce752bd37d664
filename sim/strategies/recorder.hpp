// Evaluation points: when they are due, the training loss accumulated since the last one, and the metrics.csv
// row each one becomes. Evaluation costs no simulated time.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "models/compression/compression.hpp"
#include "models/network.hpp"
#include "sim/strategies/metrics.hpp"

namespace dtsim::sim {

struct TrainingContext;

// When evaluations fall: `evaluations` of them spread evenly over every `steps` steps, each at the first step
// at or past its share (steps 6, 11, 16 for 3 in 16). A whole interval rounded down would add one: 16 / 3
// taken as 5 puts 4 evaluations into 16 steps.
struct EvaluationCadence {
  int64_t steps = 1;
  int64_t evaluations = 1;
  bool due(int64_t step) const;
};

class TrainingRecorder {
 public:
  // Evaluations at `cadence` (and one at `total_steps`); `steps_per_epoch` converts steps to epochs in the rows.
  TrainingRecorder(const TrainingContext& ctx, EvaluationCadence cadence, int64_t total_steps, double steps_per_epoch);

  // A worker's mean loss for optimizer step `step` (counted from 1): summed into the next row and checked
  // against the divergence rule (MetricsLog::check_train_loss).
  void add_train_loss(double mean_loss, int64_t step);
  // One message's compression (a worker's step, push or upload): summed into the next row and the totals.
  void add_compression(const models::CompressionStats& stats);
  // The run's totals for summary.json (null when compression.kind is none).
  nlohmann::json compression_totals() const;
  // Moves the compression sums since the last row into p's compression cells (left empty when nothing was
  // compressed): record() does it; strategies that build their own rows (federated) call it.
  void fill_compression(EvalPoint& p);
  bool due(int64_t applied_steps) const;
  // Evaluates `params` (backend memory) and records a row at the current simulated time.
  // `staleness`, for a row of the asynchronous parameter server: the gradients applied since the last row.
  // `epoch` < 0: applied_steps over the steps per epoch; otherwise the caller's count (n-softsync's last update
  // may average fewer gradients than the others, so its updates do not count the epochs exactly).
  void record(int64_t applied_steps, const float* params, gpu::NumberFormat activations, double lr, uint64_t bytes_sent,
              const StalenessInterval* staleness = nullptr, double epoch = -1.0);

 private:
  const TrainingContext& ctx_;
  EvaluationCadence cadence_;
  int64_t total_steps_;
  double steps_per_epoch_;
  double loss_sum_ = 0.0;
  int64_t loss_count_ = 0;

  // Messages' statistics summed: their ratio and relative error are those of the sum.
  struct CompressionSums {
    models::CompressionStats sum;
    uint64_t messages = 0;
    void add(const models::CompressionStats& s);
    double wire_bytes_per_message() const;
  };
  CompressionSums interval_compression_;
  CompressionSums total_compression_;
};

// The evaluations the scenario asks for: eval.per_epoch in every epoch's steps.
EvaluationCadence evaluation_cadence(const TrainingContext& ctx);

}  // namespace dtsim::sim
