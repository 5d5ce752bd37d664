// What every training strategy works with (the objective, the backend, the platform and its faults, where to
// record metrics) and what it reports back.
#pragma once

#include <simgrid/Exception.hpp>

#include <cstdint>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu/ops.hpp"
#include "models/objective.hpp"
#include "sim/config/run_config.hpp"
#include "sim/world/heterogeneity.hpp"
#include "sim/strategies/trace_log.hpp"
#include "sim/strategies/metrics.hpp"
#include "sim/world/platform.hpp"
#include "sim/config/run_inputs.hpp"
#include "sim/strategies/compute_cost.hpp"

namespace dtsim::sim {

struct TrainingContext {
  const RunInputs& inputs;
  const Platform& platform;
  models::Objective<float>& objective;
  gpu::Ops<float>& ops;
  MetricsLog& metrics;
  HeterogeneityRuntime& heterogeneity;  // non-const: strategies register fault listeners
  models::CompressionSettings compression;  // resolved once (resolved_compression in config/run_inputs)
  const ComputeCost& compute;               // what each worker's forward, backward and update cost
  TraceLog* trace = nullptr;                // output.trace: the timeline strategies add spans to (or none)

  const RunConfig& config() const { return inputs.config; }
};

struct StrategyOutcome {
  int64_t steps = 0;  // optimizer steps (or rounds) applied to the model that is evaluated
  PrecisionOutcome precision;
  uint64_t bytes_sent = 0;
  std::vector<WorkerTime> worker_time;  // rank order
  std::vector<float> final_params;
  nlohmann::json details = nlohmann::json::object();  // what only this strategy measures (summary.json "strategy")
  std::string unfinished;  // why the training ended before its planned steps, if it did (the run then failed)
};

// A training strategy: actors on the platform that do real numerics in the order the simulation decides.
class TrainingStrategy {
 public:
  virtual ~TrainingStrategy() = default;
  // Creates the actors; call before Engine::run().
  virtual void spawn() = 0;
  // After Engine::run(): what happened (rethrows an error raised inside an actor).
  virtual StrategyOutcome outcome() const = 0;
};

// The strategy training.strategy names (sim/strategies/registry.cpp).
std::unique_ptr<TrainingStrategy> make_strategy(const TrainingContext& ctx);

// The setup line's description of the configured strategy, e.g. "synchronous data parallel with ring
// allreduce, global batch 256" (each family writes its own; sim/strategies/registry.cpp dispatches).
std::string describe_strategy(const RunConfig& config);

// Runs `body` as an actor body: an exception is kept (the first one wins) and stops the simulation, so
// that the caller can rethrow it after Engine::run() instead of SimGrid aborting the process.
class ActorFailure {
 public:
  template <class F>
  void guard(F&& body) {
    try {
      body();
    } catch (const simgrid::ForcefulKillException&) {
      throw;  // SimGrid unwinds an actor whose host failed this way: not an error of ours
    } catch (...) {
      if (!error_) error_ = std::current_exception();
      simgrid::s4u::Actor::kill_all();
    }
  }
  void rethrow_if_failed() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::exception_ptr error_;
};

}  // namespace dtsim::sim
