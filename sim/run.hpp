// One dtsim run from a scenario: load the data, build the simulated cluster, train, and report.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <optional>

#include "gpu/backend.hpp"
#include <nlohmann/json.hpp>

#include "models/dataset.hpp"
#include "models/objective.hpp"
#include "models/partition.hpp"
#include "sim/config.hpp"
#include "sim/metrics.hpp"
#include "sim/numerics_setup.hpp"

namespace dtsim::sim {

class Scenario;

struct RunInputs {
  RunConfig config;
  models::Dataset train;
  models::Dataset test;
  std::optional<models::Partition> partition;  // per-worker shards, when data.partition is not none
  RunLength length;
};

// Builds the run configuration, loads or generates its datasets, partitions them and checks the numerics
// settings. Every user-fixable problem (a missing dataset file, a batch larger than the data, settings the
// optimizer rejects) is an InputError pointing at the responsible key.
RunInputs prepare_run(const Scenario& scenario);

struct RunResult {
  std::string backend;              // "cpu" or "cuda"
  std::string backend_description;  // which device, or why CUDA was not used
  std::string platform_description;  // the simulated cluster, in one line
  std::string strategy;
  std::string model_description;
  size_t num_params = 0;
  double forward_flops_per_sample = 0;
  double backward_flops_per_sample = 0;
  int steps_per_epoch = 0;

  std::vector<EvalPoint> points;
  std::vector<WorkerTime> worker_time;
  double simulated_time_s = 0.0;
  uint64_t bytes_sent = 0;
  int64_t steps = 0;
  PrecisionOutcome precision;
  nlohmann::json strategy_details = nlohmann::json::object();
  std::vector<float> final_params;

  WorkerTime mean_time() const;
  double final_accuracy() const { return points.empty() ? 0.0 : points.back().test_accuracy; }
  double best_accuracy() const;
};

// Runs the simulation on the compute backend `backend` (see gpu/backend.hpp), or on the one compute.device
// selects. Evaluation points go to `metrics` as they happen. One per process: SimGrid does not support a
// second engine in the same process.
RunResult run_training(const RunInputs& inputs, MetricsLog& metrics, gpu::BackendChoice& backend);
RunResult run_training(const RunInputs& inputs, MetricsLog& metrics);
// Same, training `objective` (a network on the inputs' data, or e.g. the validation quadratic) on `ops`.
RunResult run_training_with(const RunInputs& inputs, MetricsLog& metrics, gpu::Ops<float>& ops,
                            models::Objective<float>& objective);

}  // namespace dtsim::sim
