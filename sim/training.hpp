// What every training strategy works with (the model, the data, the backend, where to record metrics)
// and what it reports back.
#pragma once

#include <cstdint>
#include <exception>

#include <simgrid/Exception.hpp>
#include <string>
#include <vector>

#include "gpu/ops.hpp"
#include "models/dataset.hpp"
#include "models/network.hpp"
#include "sim/config.hpp"
#include "sim/metrics.hpp"
#include "sim/platform.hpp"
#include "sim/run.hpp"

namespace dtsim::sim {

struct TrainingContext {
  const RunInputs& inputs;
  const Platform& platform;
  const models::Network<float>& net;
  gpu::Ops<float>& ops;
  MetricsLog& metrics;

  const RunConfig& config() const { return inputs.config; }
  const models::Dataset& train() const { return inputs.train; }
  const models::Dataset& test() const { return inputs.test; }
};

struct StrategyOutcome {
  int64_t steps = 0;
  PrecisionOutcome precision;
  uint64_t bytes_sent = 0;
  std::vector<WorkerTime> worker_time;  // rank order
  std::vector<float> final_params;
};

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
