#include "sim/strategies/metrics.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <algorithm>

namespace dtsim::sim {

MetricsLog::MetricsLog(const std::string& csv_path, std::function<void(const EvalPoint&)> observer)
    : observer_(std::move(observer)) {
  if (!csv_path.empty()) {
    csv_.open(csv_path, std::ios::trunc);
    if (!csv_) throw std::runtime_error("cannot write " + csv_path);
    csv_ << csv_header() << '\n';
    csv_.flush();
  }
}

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::Completed: return "completed";
    case RunStatus::Diverged: return "diverged";
    case RunStatus::Interrupted: return "interrupted";
    case RunStatus::Failed: return "failed";
  }
  return "?";
}

std::string every_worker_failed_reason(double simulated_time_s) {
  char when[32];
  std::snprintf(when, sizeof when, "%.6g s", simulated_time_s);
  return std::string("every worker had failed by simulated time ") + when +
         " ([faults]); no worker was left to continue the training";
}

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

}  // namespace

std::string DivergenceRule::check_train_loss(double loss) {
  if (std::isnan(loss)) return "the training loss is NaN";
  if (std::isinf(loss)) return "the training loss is infinite";
  if (std::isnan(reference_)) reference_ = loss;
  const double limit = factor_ * std::max(1.0, reference_);
  if (loss > limit)
    return "the training loss " + number(loss) + " exceeds " + number(factor_) + " x max(1, " +
           (reference_is_initial_ ? "the untrained model's loss " : "first loss ") + number(reference_) + ")";
  return "";
}

void DivergenceRule::note_initial_loss(double test_loss) {
  if (!std::isnan(reference_) || !std::isfinite(test_loss)) return;
  reference_ = test_loss;
  reference_is_initial_ = true;
}

std::string DivergenceRule::check_evaluation(const EvalPoint& p) const {
  if (!std::isfinite(p.test_loss)) return "the test loss is not finite (the weights hold NaN or Inf)";
  return "";
}

void MetricsLog::watch_divergence(DivergenceRule rule, std::function<void(const Divergence&)> on_divergence) {
  rule_ = rule;
  on_divergence_ = std::move(on_divergence);
}

void MetricsLog::diverged(int64_t step, double sim_time_s, const std::string& cause) {
  if (divergence_) return;
  divergence_ = Divergence{step, sim_time_s, cause};
  if (on_divergence_) on_divergence_(*divergence_);
}

void MetricsLog::check_train_loss(int64_t step, double sim_time_s, double loss, int64_t total_steps) {
  if (step_observer_) step_observer_(step, total_steps, sim_time_s);
  const std::string cause = rule_.check_train_loss(loss);
  if (!cause.empty()) diverged(step, sim_time_s, cause);
}

void MetricsLog::record(const EvalPoint& point) {
  points_.push_back(point);
  if (csv_.is_open()) {
    csv_ << csv_row(point) << '\n';
    csv_.flush();
  }
  if (observer_) observer_(point);
  if (point.step == 0) rule_.note_initial_loss(point.test_loss);
  const std::string cause = rule_.check_evaluation(point);
  if (!cause.empty()) diverged(point.step, point.sim_time_s, cause);
}

std::string MetricsLog::csv_header() {
  return "step,epoch,sim_time_s,lr,train_loss,test_loss,test_accuracy,bytes_sent,compression_error,"
         "wire_bytes_per_worker,compression_ratio,staleness_mean,staleness_max,nonfinite";
}

namespace {

// A cell: the value in `fmt`, or empty (and the column named in `nonfinite`) when it is NaN or infinite.
std::string cell(const char* fmt, double v, const char* column, std::string& nonfinite) {
  if (!std::isfinite(v)) {
    nonfinite += nonfinite.empty() ? column : std::string("|") + column;
    return "";
  }
  char text[64];
  std::snprintf(text, sizeof text, fmt, v);
  return text;
}

}  // namespace

std::string MetricsLog::csv_row(const EvalPoint& p) {
  // Fixed formats so identical runs give byte-identical files. A value that is NaN or infinite is never
  // written as text: its cell is empty and the last column, nonfinite, names it. train_loss is empty without a
  // flag before training (no step measured yet), and the compression cells when nothing was compressed.
  std::string nonfinite;
  const std::string epoch = cell("%.4f", p.epoch, "epoch", nonfinite);
  const std::string time = cell("%.9g", p.sim_time_s, "sim_time_s", nonfinite);
  const std::string lr = cell("%.6g", p.lr, "lr", nonfinite);
  const std::string train_loss =
      p.train_loss_measured ? cell("%.6f", p.train_loss, "train_loss", nonfinite) : std::string();
  const std::string test_loss = cell("%.6f", p.test_loss, "test_loss", nonfinite);
  const std::string accuracy = cell("%.6f", p.test_accuracy, "test_accuracy", nonfinite);
  std::string compression = ",,";
  if (!std::isnan(p.compression_error))
    compression = cell("%.6f", p.compression_error, "compression_error", nonfinite) + "," +
                  cell("%.1f", p.wire_bytes_per_worker, "wire_bytes_per_worker", nonfinite) + "," +
                  cell("%.4f", p.compression_ratio, "compression_ratio", nonfinite);
  std::string staleness = ",";
  if (!std::isnan(p.staleness_mean))
    staleness = cell("%.4f", p.staleness_mean, "staleness_mean", nonfinite) + "," +
                cell("%.0f", p.staleness_max, "staleness_max", nonfinite);
  char head[64];
  std::snprintf(head, sizeof head, "%" PRId64 ",", p.step);
  char bytes[32];
  std::snprintf(bytes, sizeof bytes, "%" PRIu64, p.bytes_sent);
  return head + epoch + "," + time + "," + lr + "," + train_loss + "," + test_loss + "," + accuracy + "," + bytes +
         "," + compression + "," + staleness + "," + nonfinite;
}

}  // namespace dtsim::sim
