#include "sim/strategies/metrics.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <stdexcept>

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

void MetricsLog::record(const EvalPoint& point) {
  points_.push_back(point);
  if (csv_.is_open()) {
    csv_ << csv_row(point) << '\n';
    csv_.flush();
  }
  if (observer_) observer_(point);
}

std::string MetricsLog::csv_header() {
  return "step,epoch,sim_time_s,lr,train_loss,test_loss,test_accuracy,bytes_sent,compression_error,"
         "wire_bytes_per_worker,compression_ratio";
}

std::string MetricsLog::csv_row(const EvalPoint& p) {
  // Fixed formats so identical runs give byte-identical files; train_loss is empty before training.
  char train_loss[32] = "";
  if (!std::isnan(p.train_loss)) std::snprintf(train_loss, sizeof train_loss, "%.6f", p.train_loss);
  char compression[96] = ",,";
  if (!std::isnan(p.compression_error))
    std::snprintf(compression, sizeof compression, "%.6f,%.1f,%.4f", p.compression_error, p.wire_bytes_per_worker,
                  p.compression_ratio);
  char row[384];
  std::snprintf(row, sizeof row, "%" PRId64 ",%.4f,%.9g,%.6g,%s,%.6f,%.6f,%" PRIu64 ",%s", p.step, p.epoch,
                p.sim_time_s, p.lr, train_loss, p.test_loss, p.test_accuracy, p.bytes_sent, compression);
  return row;
}

}  // namespace dtsim::sim
