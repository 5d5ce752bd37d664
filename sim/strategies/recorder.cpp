#include "sim/strategies/recorder.hpp"

#include <algorithm>
#include <limits>

#include "sim/strategies/training.hpp"

namespace dtsim::sim {

bool EvaluationCadence::due(int64_t step) const {
  if (step < 1) return false;
  // Evaluation k falls on the first step s with s · evaluations ≥ k · steps: the count of those at or
  // before s, ⌊s · evaluations / steps⌋, grows at s. In 128 bits: both factors can reach about 1e11.
  __extension__ using Wide = __int128;
  const auto count = [&](int64_t s) { return static_cast<Wide>(s) * evaluations / std::max<int64_t>(1, steps); };
  return count(step) > count(step - 1);
}

TrainingRecorder::TrainingRecorder(const TrainingContext& ctx, EvaluationCadence cadence, int64_t total_steps,
                                   double steps_per_epoch)
    : ctx_(ctx), cadence_(cadence), total_steps_(total_steps), steps_per_epoch_(steps_per_epoch) {}

void TrainingRecorder::add_train_loss(double mean_loss, int64_t step) {
  loss_sum_ += mean_loss;
  ++loss_count_;
  ctx_.metrics.check_train_loss(step, simgrid::s4u::Engine::get_clock(), mean_loss, total_steps_);
}

void TrainingRecorder::CompressionSums::add(const models::CompressionStats& s) {
  sum.error_sum_squares += s.error_sum_squares;
  sum.input_sum_squares += s.input_sum_squares;
  sum.wire_bytes += s.wire_bytes;
  sum.dense_bytes += s.dense_bytes;
  sum.threshold_fallbacks += s.threshold_fallbacks;
  ++messages;
}

double TrainingRecorder::CompressionSums::wire_bytes_per_message() const {
  return messages > 0 ? static_cast<double>(sum.wire_bytes) / static_cast<double>(messages) : 0.0;
}

void TrainingRecorder::add_compression(const models::CompressionStats& stats) {
  interval_compression_.add(stats);
  total_compression_.add(stats);
}

nlohmann::json TrainingRecorder::compression_totals() const {
  const CompressionSums& t = total_compression_;
  const models::CompressionSettings& settings = ctx_.config().compression.settings;
  if (settings.kind == models::CompressorKind::None) return nullptr;
  // Without a compressed message (local SGD averaging models only) the ratios are 0/0: null, not 0.
  const auto measured = [&](double v) { return t.messages > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"kind", models::to_string(settings.kind)},
          {"error_feedback", settings.error_feedback},
          {"messages", t.messages},
          {"wire_bytes", t.sum.wire_bytes},
          {"fp32_bytes", t.sum.dense_bytes},
          {"compression_ratio", measured(t.sum.compression_ratio())},
          {"relative_error", measured(t.sum.relative_error())},
          {"wire_bytes_per_message", measured(t.wire_bytes_per_message())},
          {"threshold_fallbacks", t.sum.threshold_fallbacks}};
}

void TrainingRecorder::fill_compression(EvalPoint& p) {
  const CompressionSums& c = interval_compression_;
  if (c.messages > 0) {
    p.compression_error = c.sum.relative_error();
    p.wire_bytes_per_worker = c.wire_bytes_per_message();
    p.compression_ratio = c.sum.compression_ratio();
  }
  interval_compression_ = {};
}

bool TrainingRecorder::due(int64_t applied_steps) const {
  return cadence_.due(applied_steps) || applied_steps == total_steps_;
}

void TrainingRecorder::record(int64_t applied_steps, const float* params, gpu::NumberFormat activations, double lr,
                              uint64_t bytes_sent, const StalenessInterval* staleness, double epoch) {
  const models::EvalResult test = ctx_.objective.evaluate(params, activations);
  EvalPoint p;
  p.step = applied_steps;
  p.epoch = epoch >= 0.0 ? epoch : steps_per_epoch_ > 0 ? static_cast<double>(applied_steps) / steps_per_epoch_ : 0.0;
  p.sim_time_s = simgrid::s4u::Engine::get_clock();
  p.lr = lr;
  p.train_loss = loss_count_ > 0 ? loss_sum_ / static_cast<double>(loss_count_) : std::numeric_limits<double>::quiet_NaN();
  p.train_loss_measured = loss_count_ > 0;
  p.test_loss = test.loss;
  p.test_accuracy = test.accuracy;
  p.bytes_sent = bytes_sent;
  fill_compression(p);
  if (staleness && staleness->count > 0) {
    p.staleness_mean = staleness->mean;
    p.staleness_max = static_cast<double>(staleness->max);
  }
  loss_sum_ = 0.0;
  loss_count_ = 0;
  ctx_.metrics.record(p);
}

EvaluationCadence evaluation_cadence(const TrainingContext& ctx) {
  return {std::max<int64_t>(1, ctx.inputs.length.steps_per_epoch), ctx.config().evals_per_epoch};
}

}  // namespace dtsim::sim
