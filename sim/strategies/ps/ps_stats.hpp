// What the asynchronous parameter server measures per worker: the staleness of every gradient it applied
// (a histogram), how many of its gradients were applied, the learning-rate factors they got, and how long
// bounded staleness held its pulls.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "sim/strategies/metrics.hpp"

namespace dtsim::sim {

class StalenessStats {
 public:
  explicit StalenessStats(int workers);

  // One gradient of `worker` applied at a shard, `staleness` updates after its pull.
  void applied(int worker, int shard, int64_t staleness, double lr_factor);
  // A pull of `worker` that a shard held for `seconds` (bounded staleness).
  void held(int worker, double seconds);

  // The applications since the previous call (at every shard, as mean_staleness counts them), for a row of
  // metrics.csv.
  StalenessInterval take_interval();

  // Over every application at every shard (a gradient counts once per shard).
  double mean_staleness() const;
  int64_t max_staleness() const;
  int64_t max_staleness(int worker) const;
  double mean_staleness(int worker) const;
  int64_t gradients_applied(int worker) const { return at(worker).gradients; }  // at shard 0
  int64_t gradients_applied() const;
  const std::vector<int64_t>& histogram(int worker) const { return at(worker).histogram; }
  int64_t held_pulls() const;
  double held_seconds(int worker) const { return at(worker).held_s; }

  // Per worker: rank, gradients_applied, mean/max staleness, histogram (index = staleness), mean lr factor,
  // held pulls and seconds.
  nlohmann::json workers_json() const;

 private:
  int64_t interval_count_ = 0;
  double interval_sum_ = 0.0;
  int64_t interval_max_ = 0;
  struct PerWorker {
    std::vector<int64_t> histogram;
    int64_t gradients = 0;
    int64_t applications = 0;
    double staleness_sum = 0.0;
    double lr_factor_sum = 0.0;
    int64_t held_pulls = 0;
    double held_s = 0.0;
  };
  const PerWorker& at(int worker) const { return workers_.at(static_cast<size_t>(worker)); }

  std::vector<PerWorker> workers_;
};

}  // namespace dtsim::sim
