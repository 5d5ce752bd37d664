// One dtsim run from a scenario: load the data, build the simulated cluster, train, and report.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <optional>

#include "gpu/backend.hpp"
#include <nlohmann/json.hpp>

#include "models/objective.hpp"
#include "sim/config/run_inputs.hpp"
#include "sim/strategies/metrics.hpp"
#include "sim/world/link_traffic.hpp"

namespace dtsim::sim {

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
  // The QA task (data.dataset = qa): exact match and F1 of the final model, overall and per domain, and what its
  // base stores; empty otherwise.
  nlohmann::json qa_details = nlohmann::json::object();
  std::vector<float> final_params;
  std::optional<LinkTraffic::LinkRow> busiest_link;  // with output.links: the link with the highest mean utilisation
  std::string links_csv;   // links.csv with output.links (also for a run that ended early), else empty
  std::string trace_json;  // trace.json with output.trace (also for a run that ended early), else empty

  // How the run ended (completed unless it diverged or was stopped); status_reason says why.
  RunStatus status = RunStatus::Completed;
  // Keys found without effect only once the run ended (a failure planned after it), beside the inputs' own.
  std::vector<IgnoredKey> ignored_after_run;
  std::string status_reason;
  std::optional<Divergence> divergence;

  WorkerTime mean_time() const;
  double final_accuracy() const { return points.empty() ? 0.0 : points.back().test_accuracy; }
  double best_accuracy() const;
  // The first evaluation with the best test accuracy (a NaN accuracy never is); null without one.
  const EvalPoint* best_point() const;
};

// A run that ended early (interrupted, diverged, failed): the rows `metrics` recorded, the steps and bytes of
// the last of them, and the simulated time it reached.
RunResult result_so_far(const RunInputs& inputs, const MetricsLog& metrics, RunStatus status, std::string reason,
                        double simulated_time_s);

// Asks a running simulation to stop (from a signal handler: async-signal-safe). The simulation notices as its
// clock next advances, ends every actor and returns a RunResult whose status is interrupted; the rows
// recorded so far stay. `signal` is kept for the exit status (SIGINT → 130, SIGTERM → 143).
void request_stop(int signal);
// The signal passed to request_stop, or 0.
int stop_signal();
// From now on SIGINT and SIGTERM call request_stop (also once SimGrid's engine, which installs a handler of
// its own, exists). `dtsim run` calls it; library users and tests need not.
void stop_on_signals();
// Takes SIGINT and SIGTERM back from a SimGrid engine just created (its own SIGINT handler exits at once, with
// status 1 and its actors' status), if stop_on_signals was called; otherwise nothing.
void reclaim_stop_signals();
// Until the simulation runs, a stop signal ends the process at once (there is nothing to keep yet): it removes
// `paths` in order, each a file or an empty folder (the run's metrics file, its staging folder, and the --out
// folder with its lock file when this run made them).
void remove_on_early_stop(std::vector<std::string> paths);

// Runs the simulation on the compute backend `backend` (see gpu/backend.hpp), or on the one compute.device
// selects. Evaluation points go to `metrics` as they happen. One per process: SimGrid does not support a
// second engine in the same process.
RunResult run_training(const RunInputs& inputs, MetricsLog& metrics, gpu::BackendChoice& backend);
RunResult run_training(const RunInputs& inputs, MetricsLog& metrics);
// Same, training `objective` (a network on the inputs' data, or e.g. the validation quadratic) on `ops`.
RunResult run_training_with(const RunInputs& inputs, MetricsLog& metrics, gpu::Ops<float>& ops,
                            models::Objective<float>& objective);

}  // namespace dtsim::sim
