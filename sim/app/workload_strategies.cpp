#include "sim/app/workload_strategies.hpp"

#include <algorithm>
#include <cmath>

#include "sim/strategies/ps/ps_partition.hpp"
#include "sim/strategies/timing/fl_timing.hpp"
#include "sim/strategies/timing/local_timing.hpp"
#include "sim/strategies/timing/ps_timing.hpp"
#include "sim/world/faults.hpp"

namespace dtsim::sim {
namespace {

// A worker's forward and backward pass (the backward after the last trained layer included) at `rates`.
double forward_backward_seconds(const models::GradientTimeline& t) {
  double s = t.forward + t.tail;
  for (const double b : t.backward) s += b;
  return s;
}

uint64_t wire_bytes(double values, double bytes_per_value) {
  return static_cast<uint64_t>(std::llround(values * bytes_per_value));
}

}  // namespace

void simulate_ps_steps(SimulatedSteps& out, const models::Workload& w, const models::MemorySetup& setup,
                       const models::DeviceRates& rates, const RunConfig& cfg, const Platform& platform, double speed,
                       const StragglerModel* stragglers, int steps) {
  const models::GradientTimeline t = models::gradient_timeline(w, setup, rates);
  PsTimingSpec spec;
  spec.gradient_flops = forward_backward_seconds(t) * speed;
  // prepare_workload_run has refused more shards than trained layers.
  const std::vector<uint64_t> values = split_workload_layers(w, cfg.ps.servers);
  for (const uint64_t v : values) {
    spec.push_bytes.push_back(wire_bytes(static_cast<double>(v), setup.gradient_bytes));
    spec.pull_bytes.push_back(wire_bytes(static_cast<double>(v), setup.weight_bytes));
  }
  spec.gradients_per_update = cfg.ps.gradients_per_update;
  spec.staleness_bound = cfg.ps.bounded() ? cfg.ps.staleness_bound : -1;
  spec.steps = steps;
  spec.stragglers = stragglers;
  const PsTimingOutcome r = run_ps_timing(platform, spec);
  out.timing = r.timing;
  const auto& ends = out.timing.step_end_s;
  out.step_s = ends.size() > 1 ? (ends.back() - ends.front()) / static_cast<double>(ends.size() - 1) : ends.front();
  out.end_s = r.end_s;
  out.collective = "parameter server with " + std::to_string(cfg.ps.servers) +
                   (cfg.ps.servers == 1 ? " shard" : " shards") + " on hosts of their own";
  out.details = {{"servers", cfg.ps.servers},
                 {"shard_values", values},
                 {"gradients_per_update", cfg.ps.gradients_per_update},
                 {"gradients_applied", r.staleness.gradients_applied()},
                 {"updates", r.updates},
                 {"mean_staleness", r.staleness.mean_staleness()},
                 {"max_staleness", r.staleness.max_staleness()},
                 {"staleness_bound", cfg.ps.bounded() ? nlohmann::json(cfg.ps.staleness_bound) : nlohmann::json(nullptr)},
                 {"held_pulls", r.staleness.held_pulls()}};
}

void simulate_local_sgd_steps(SimulatedSteps& out, const models::Workload& w, const models::MemorySetup& setup,
                              const models::DeviceRates& rates, const RunConfig& cfg, const Platform& platform,
                              double speed, const StragglerModel* stragglers, int steps, const MakeCollective& make) {
  const models::GradientTimeline t = models::gradient_timeline(w, setup, rates);
  LocalSgdTimingSpec spec;
  spec.forward_flops = t.forward * speed;
  spec.backward_update_flops = (forward_backward_seconds(t) - t.forward + t.optimizer) * speed;
  spec.averaged_bytes = wire_bytes(static_cast<double>(w.trainable()), setup.weight_bytes);
  spec.local_steps = cfg.sync.local_steps;
  spec.steps = steps;
  spec.stragglers = stragglers;
  spec.one_rank_may_stand_in = cfg.heterogeneity.empty();  // slow hosts and draws make ranks differ
  // Post-local SGD: its synchronous steps are sync data parallelism's (buckets handed during backward).
  spec.sync_until_step = static_cast<int>(std::min<int64_t>(cfg.sync.sync_until_step, steps));
  TimingSpec synchronous;
  if (spec.sync_until_step > 0) {
    synchronous = timing_spec(w, setup, rates, speed);
    synchronous.bucket_bytes = cfg.sync.bucket_bytes;
    synchronous.overlap = cfg.sync.overlap;
    spec.sync_step = &synchronous;
  }
  const LocalSgdTimingOutcome r = run_local_sgd_timing(platform, spec, make);
  out.timing = r.timing;
  out.end_s = out.timing.step_end_s.back();
  out.step_s = out.end_s / steps;  // averaging steps and local ones, in their proportion
  out.details = {{"local_steps", spec.local_steps},
                 {"sync_until_step", spec.sync_until_step},
                 {"averagings", r.averagings},
                 {"averaged_bytes", spec.averaged_bytes}};
}

void simulate_fl_rounds(SimulatedSteps& out, const models::Workload& w, const models::MemorySetup& setup,
                        const models::DeviceRates& rates, const RunConfig& cfg, const Platform& platform,
                        double speed, const StragglerModel* stragglers) {
  const models::GradientTimeline t = models::gradient_timeline(w, setup, rates);
  const int vectors = cfg.fl.algorithm == models::FlAlgorithm::Scaffold ? 2 : 1;  // SCAFFOLD's c travels too
  const double trained = static_cast<double>(w.trainable());
  FlTimingSpec spec;
  spec.step_flops = (forward_backward_seconds(t) + t.optimizer) * speed;
  spec.download_bytes = static_cast<uint64_t>(vectors) * wire_bytes(trained, setup.weight_bytes);
  spec.upload_bytes = spec.download_bytes;
  spec.aggregation_flops = 2.0 * trained * vectors;
  spec.rounds = cfg.fl.rounds;
  spec.drop_policy = cfg.fl.straggler_policy == StragglerPolicy::Drop;
  spec.deadline_s = cfg.fl.deadline;
  if (cfg.fl.secure_aggregation.enabled) spec.secure_aggregation.emplace(cfg.fl.secure_aggregation);
  spec.wire_values = w.trainable();
  spec.vectors = vectors;
  spec.stragglers = stragglers;
  // Every client holds as much data: sampling by samples is then uniform in weight.
  const FaultSchedule no_faults;
  const RoundPlanner planner(cfg.fl, cfg.heterogeneity_seed(), std::vector<double>(static_cast<size_t>(out.workers), 1.0),
                             setup.micro_batch, no_faults);
  const FlTimingOutcome r = run_fl_timing(platform, spec, planner);
  out.timing = r.timing;
  const auto& ends = out.timing.step_end_s;
  out.end_s = ends.empty() ? 0.0 : ends.back();
  out.step_s = ends.empty() ? 0.0 : out.end_s / static_cast<double>(ends.size());
  out.busy_gpus = cfg.fl.clients_per_round;
  out.samples_per_step = ends.empty() ? 0.0
                                      : static_cast<double>(r.local_steps_kept) * setup.micro_batch /
                                            static_cast<double>(ends.size());
  out.collective = "federated server on a host of its own";
  out.details = {{"algorithm", models::to_string(cfg.fl.algorithm)},
                 {"rounds", cfg.fl.rounds},
                 {"clients", out.workers},
                 {"clients_per_round", cfg.fl.clients_per_round},
                 {"model_bytes", spec.download_bytes},
                 {"reports_kept", r.reports_kept},
                 {"dropped_overcommit", r.dropped_overcommit},
                 {"dropped_stragglers", r.dropped_stragglers},
                 {"dropped_deadline", r.dropped_deadline},
                 {"lost", r.lost},
                 {"secure_aggregation", cfg.fl.secure_aggregation.enabled},
                 {"deadline_s", cfg.fl.deadline},
                 {"local_steps_kept", r.local_steps_kept},
                 {"empty_rounds", r.empty_rounds}};
}

}  // namespace dtsim::sim
