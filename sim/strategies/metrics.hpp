// What a run measures: evaluation points (one metrics.csv row each) and per-worker simulated time.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace dtsim::sim {

struct EvalPoint {
  int64_t step = 0;           // optimizer steps applied so far
  double epoch = 0.0;         // step / steps per epoch
  double sim_time_s = 0.0;    // simulated clock when the step's update was applied
  double lr = 0.0;            // learning rate used by that step
  double train_loss = 0.0;    // mean mini-batch loss since the previous point (NaN before training)
  double test_loss = 0.0;     // mean cross-entropy on the test set
  double test_accuracy = 0.0; // fraction of test samples classified correctly
  uint64_t bytes_sent = 0;    // by all workers since the start
  // Gradient compression over the messages since the previous point; NaN (an empty cell) when none was
  // compressed. The error is sqrt(Σ‖x − C(x)‖² / Σ‖x‖²) over every worker's messages, x the compressor's input.
  double compression_error = std::numeric_limits<double>::quiet_NaN();
  double wire_bytes_per_worker = std::numeric_limits<double>::quiet_NaN();  // mean per message (worker-step)
  double compression_ratio = std::numeric_limits<double>::quiet_NaN();      // fp32 bytes / wire bytes
};

// Simulated seconds a worker spent in each activity. They add up to the worker's part of the run.
struct WorkerTime {
  double compute = 0.0;        // executing forward/backward FLOPs
  double communication = 0.0;  // in collectives once every peer was ready
  double idle = 0.0;           // waiting for the slowest peer to finish computing
};

// What mixed precision did over a run.
struct PrecisionOutcome {
  int64_t overflows = 0;      // steps whose gradients were not finite
  int64_t skipped_steps = 0;  // steps not applied because of that
  int64_t scale_growths = 0;  // times the dynamic loss scale grew
  double final_loss_scale = 1.0;
};

// Appends each point to metrics.csv as it arrives (so an interrupted run keeps what it measured) and
// passes it on to an optional observer (progress output).
class MetricsLog {
 public:
  MetricsLog() = default;
  explicit MetricsLog(const std::string& csv_path, std::function<void(const EvalPoint&)> observer = nullptr);

  void record(const EvalPoint& point);
  const std::vector<EvalPoint>& points() const { return points_; }

  static std::string csv_header();
  static std::string csv_row(const EvalPoint& p);

 private:
  std::ofstream csv_;
  std::function<void(const EvalPoint&)> observer_;
  std::vector<EvalPoint> points_;
};

}  // namespace dtsim::sim
