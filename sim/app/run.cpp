#include "sim/app/run.hpp"

#include <algorithm>

#include "gpu/backend.hpp"
#include "gpu/cuda_device.hpp"
#include "models/network.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/world/build_platform.hpp"
#include "sim/world/heterogeneity.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/strategies/training.hpp"

namespace dtsim::sim {

WorkerTime RunResult::mean_time() const {
  WorkerTime m;
  for (const WorkerTime& t : worker_time) {
    m.compute += t.compute;
    m.communication += t.communication;
    m.idle += t.idle;
  }
  const double n = worker_time.empty() ? 1.0 : static_cast<double>(worker_time.size());
  m.compute /= n;
  m.communication /= n;
  m.idle /= n;
  return m;
}

double RunResult::best_accuracy() const {
  double best = 0.0;
  for (const EvalPoint& p : points) best = std::max(best, p.test_accuracy);
  return best;
}

RunResult run_training(const RunInputs& inputs, MetricsLog& metrics) {
  gpu::BackendChoice backend = gpu::make_backend(inputs.config.device);
  return run_training(inputs, metrics, backend);
}

RunResult run_training(const RunInputs& inputs, MetricsLog& metrics, gpu::BackendChoice& backend) {
  gpu::Ops<float>& ops = *backend.ops;
  auto network = models::make_network<float>(network_spec(inputs.config, inputs.train));
  const models::Network<float>* net = network.get();
  models::NetworkObjective objective(std::move(network), ops, inputs.train, inputs.test, inputs.config.workers,
                                     inputs.config.batch_per_worker, inputs.partition, inputs.config.seed);
  RunResult r = run_training_with(inputs, metrics, ops, objective);
  r.backend_description = backend.description;
  r.forward_flops_per_sample = net->forward_flops_per_sample();
  r.backward_flops_per_sample = net->backward_flops_per_sample();
  return r;
}

RunResult run_training_with(const RunInputs& inputs, MetricsLog& metrics, gpu::Ops<float>& ops,
                            models::Objective<float>& objective) {
  const RunConfig& cfg = inputs.config;
  const PlatformSpec spec = platform_spec(cfg);
  auto engine = create_engine(network_settings(spec));
  // Parameter-server shards and federated learning's aggregator run on hosts of their own.
  const Platform platform = build_platform(*engine, spec, server_hosts(cfg));
  HeterogeneityRuntime heterogeneity = apply_heterogeneity(*engine, platform, cfg);

  const TrainingContext ctx{inputs, platform, objective, ops, metrics, heterogeneity, resolved_compression(inputs)};
  const std::unique_ptr<TrainingStrategy> strategy = make_strategy(ctx);
  strategy->spawn();
  engine->run();
  StrategyOutcome outcome = strategy->outcome();

  RunResult r;
  r.backend = ops.name();
  r.backend_description = ops.name();
  r.platform_description = platform.description;
  r.strategy = to_string(inputs.config.strategy);
  r.model_description = objective.description();
  r.num_params = objective.num_params();
  r.steps_per_epoch = static_cast<int>(inputs.length.steps_per_epoch);
  r.points = metrics.points();
  r.worker_time = std::move(outcome.worker_time);
  r.simulated_time_s = sg4::Engine::get_clock();
  r.bytes_sent = outcome.bytes_sent;
  r.steps = outcome.steps;
  r.precision = outcome.precision;
  r.strategy_details = std::move(outcome.details);
  r.final_params = std::move(outcome.final_params);
  return r;
}

}  // namespace dtsim::sim
