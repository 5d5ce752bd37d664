// What a run measures: evaluation points (one metrics.csv row each) and per-worker simulated time.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
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
  // Asynchronous parameter server: the staleness of the gradients applied since the previous point (at every
  // shard); NaN (empty cells) for other strategies and when none was applied.
  double staleness_mean = std::numeric_limits<double>::quiet_NaN();
  double staleness_max = std::numeric_limits<double>::quiet_NaN();
  bool train_loss_measured = false;  // some step's loss went into train_loss (else it is empty, not a value)
};

// The staleness of the gradients an asynchronous parameter server applied between two rows.
struct StalenessInterval {
  int64_t count = 0;  // applications (a gradient counts once per shard); 0: none, the row's cells stay empty
  double mean = 0.0;
  int64_t max = 0;
};

// How a run ended. Every summary.json says which, with a reason (docs/outputs.md).
enum class RunStatus { Completed, Diverged, Interrupted, Failed };
const char* to_string(RunStatus status);
// The status reason of a run whose workers had all failed by `simulated_time_s` (the run, or the strategy that
// knows it, reports it).
std::string every_worker_failed_reason(double simulated_time_s);

// Where and why a run diverged.
struct Divergence {
  int64_t step = 0;
  double sim_time_s = 0.0;
  std::string cause;
};

// The divergence rule (docs/outputs.md): a run diverges at the first step whose training loss is NaN or
// infinite, or exceeds `factor` × max(1, the first measured training loss), or at the first evaluation whose
// test loss is NaN or infinite (the weights hold NaN or Inf: an update that was not finite reached them).
class DivergenceRule {
 public:
  explicit DivergenceRule(double factor = 100.0) : factor_(factor) {}
  // The cause when `loss` (a step's mean training loss) breaks the rule, else "".
  std::string check_train_loss(double loss);
  // The cause when the evaluation `p` breaks the rule, else "".
  std::string check_evaluation(const EvalPoint& p) const;
  // The untrained model's test loss (the step-0 evaluation), the reference when it comes before any training
  // loss: the first training loss of local SGD or of a federated round is a mean over several steps, taken
  // after a blow-up as readily as before it.
  void note_initial_loss(double test_loss);

 private:
  double factor_;
  double reference_ = std::numeric_limits<double>::quiet_NaN();  // the starting loss, once known
  bool reference_is_initial_ = false;  // the untrained model's test loss, rather than a first training loss
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

  // Divergence watching: `rule` decides, `on_divergence` (when set) is called once, at the first divergence,
  // from the simulation actor that found it (the run stops it there unless eval.stop_on_divergence is false).
  void watch_divergence(DivergenceRule rule, std::function<void(const Divergence&)> on_divergence);
  // A step's mean training loss, at simulated time `sim_time_s`, for the divergence rule; `total_steps` (in the
  // same unit, 0 if unknown) goes with the step to the step observer (the live progress display).
  void check_train_loss(int64_t step, double sim_time_s, double loss, int64_t total_steps = 0);
  using StepObserver = std::function<void(int64_t step, int64_t total_steps, double sim_time_s)>;
  void observe_steps(StepObserver observer) { step_observer_ = std::move(observer); }
  const std::optional<Divergence>& divergence() const { return divergence_; }

  static std::string csv_header();
  static std::string csv_row(const EvalPoint& p);

 private:
  void diverged(int64_t step, double sim_time_s, const std::string& cause);

  std::ofstream csv_;
  std::function<void(const EvalPoint&)> observer_;
  StepObserver step_observer_;
  std::vector<EvalPoint> points_;
  DivergenceRule rule_;
  std::function<void(const Divergence&)> on_divergence_;
  std::optional<Divergence> divergence_;
};

}  // namespace dtsim::sim
