#include "sim/strategies/ps/ps_stats.hpp"

#include <algorithm>

namespace dtsim::sim {

StalenessStats::StalenessStats(int workers) : workers_(static_cast<size_t>(workers)) {}

void StalenessStats::applied(int worker, int shard, int64_t staleness, double lr_factor) {
  PerWorker& w = workers_.at(static_cast<size_t>(worker));
  const size_t bin = static_cast<size_t>(staleness);
  if (w.histogram.size() <= bin) w.histogram.resize(bin + 1, 0);
  ++w.histogram[bin];
  ++w.applications;
  w.staleness_sum += static_cast<double>(staleness);
  w.lr_factor_sum += lr_factor;
  if (shard == 0) ++w.gradients;
  ++interval_count_;
  interval_sum_ += static_cast<double>(staleness);
  interval_max_ = std::max(interval_max_, staleness);
}

StalenessInterval StalenessStats::take_interval() {
  StalenessInterval out;
  out.count = interval_count_;
  out.mean = interval_count_ > 0 ? interval_sum_ / static_cast<double>(interval_count_) : 0.0;
  out.max = interval_max_;
  interval_count_ = 0;
  interval_sum_ = 0.0;
  interval_max_ = 0;
  return out;
}

void StalenessStats::held(int worker, double seconds) {
  PerWorker& w = workers_.at(static_cast<size_t>(worker));
  ++w.held_pulls;
  w.held_s += seconds;
}

double StalenessStats::mean_staleness() const {
  double sum = 0.0;
  int64_t n = 0;
  for (const PerWorker& w : workers_) {
    sum += w.staleness_sum;
    n += w.applications;
  }
  return n > 0 ? sum / static_cast<double>(n) : 0.0;
}

int64_t StalenessStats::max_staleness(int worker) const {
  const std::vector<int64_t>& h = at(worker).histogram;
  return h.empty() ? 0 : static_cast<int64_t>(h.size()) - 1;
}

int64_t StalenessStats::max_staleness() const {
  int64_t m = 0;
  for (size_t w = 0; w < workers_.size(); ++w) m = std::max(m, max_staleness(static_cast<int>(w)));
  return m;
}

double StalenessStats::mean_staleness(int worker) const {
  const PerWorker& w = at(worker);
  return w.applications > 0 ? w.staleness_sum / static_cast<double>(w.applications) : 0.0;
}

int64_t StalenessStats::gradients_applied() const {
  int64_t n = 0;
  for (const PerWorker& w : workers_) n += w.gradients;
  return n;
}

int64_t StalenessStats::held_pulls() const {
  int64_t n = 0;
  for (const PerWorker& w : workers_) n += w.held_pulls;
  return n;
}

nlohmann::json StalenessStats::workers_json() const {
  nlohmann::json all = nlohmann::json::array();
  for (size_t i = 0; i < workers_.size(); ++i) {
    const PerWorker& w = workers_[i];
    const int rank = static_cast<int>(i);
    all.push_back({{"rank", rank},
                   {"gradients_applied", w.gradients},
                   {"mean_staleness", mean_staleness(rank)},
                   {"max_staleness", max_staleness(rank)},
                   {"staleness_histogram", w.histogram},
                   {"mean_lr_factor", w.applications > 0 ? w.lr_factor_sum / static_cast<double>(w.applications) : 1.0},
                   {"held_pulls", w.held_pulls},
                   {"held_s", w.held_s}});
  }
  return all;
}

}  // namespace dtsim::sim
