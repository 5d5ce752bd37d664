// Stragglers through the whole synchronous data-parallel simulator: the slowest worker sets every step's
// time, the others wait for it (accounted as idle), and the numerics are untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "sim/app/run.hpp"
#include "sim/world/stragglers.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

constexpr int kWorkers = 4;
constexpr int kSteps = 20;

RunInputs small_run(const StragglerConfig& stragglers) {
  RunInputs in;
  RunConfig& c = in.config;
  c.name = "heterogeneity-sync";
  c.seed = 5;
  c.workers = kWorkers;
  c.gpu = {"test-gpu", 10e12, 10e12, 10e12, 40e9, 0.5};
  c.fabric = {"test-fabric", 25e9, 1e-6, 0.0, 1.0};
  c.hidden = {64};
  c.batch_per_worker = 16;
  c.epochs = 2;  // 16 steps per epoch: the run crosses an epoch boundary
  c.max_steps = kSteps;
  c.lr = 0.05;
  c.evals_per_epoch = 1;
  c.heterogeneity.stragglers = stragglers;
  in.train = models::load_fashion_mnist("/usr/share/datasets/fashion-mnist", models::Split::Train, 1024);
  in.test = models::load_fashion_mnist("/usr/share/datasets/fashion-mnist", models::Split::Test, 100);
  in.length = run_length(c, in.train.num_samples);
  return in;
}

struct Outcome {
  double sim_time = 0;
  double flops_per_sample = 0;
  std::vector<WorkerTime> times;
  std::vector<float> params;
};

Outcome train(const StragglerConfig& stragglers) {
  const std::string bytes = dtsim::testing::run_in_child([&] {
    const RunInputs in = small_run(stragglers);
    MetricsLog metrics;
    const RunResult r = run_training(in, metrics);
    if (r.steps != kSteps) throw std::runtime_error("wrong number of steps: " + std::to_string(r.steps));
    std::vector<double> v{r.simulated_time_s, r.forward_flops_per_sample + r.backward_flops_per_sample};
    for (const WorkerTime& t : r.worker_time) v.insert(v.end(), {t.compute, t.communication, t.idle});
    for (const float p : r.final_params) v.push_back(p);
    return dtsim::testing::to_bytes(v);
  });
  const std::vector<double> v = dtsim::testing::from_bytes<double>(bytes);
  Outcome o;
  o.sim_time = v[0];
  o.flops_per_sample = v[1];
  for (int w = 0; w < kWorkers; ++w) o.times.push_back({v[2 + 3 * w], v[3 + 3 * w], v[4 + 3 * w]});
  for (size_t i = 2 + 3 * kWorkers; i < v.size(); ++i) o.params.push_back(static_cast<float>(v[i]));
  return o;
}

// Compute time of one nominal worker step.
double step_compute(const Outcome& o) {
  const RunInputs in = small_run({});
  return in.config.batch_per_worker * o.flops_per_sample / in.config.gpu.sustained(in.config.math);
}

TEST(HeterogeneousSync, HalfSpeedWorkerSetsTheStepTime) {
  const Outcome nominal = train({});
  StragglerConfig slow;
  slow.slow_workers = {{2, 0.5}};
  const Outcome o = train(slow);
  const double c = step_compute(nominal);
  // Every step: the slow worker computes 2c, the others c and then wait c for it; the allreduce is the same.
  // So the run is longer by exactly one nominal compute time per step.
  EXPECT_NEAR(o.sim_time - nominal.sim_time, kSteps * c, 1e-9 * o.sim_time);
  for (int w = 0; w < kWorkers; ++w) {
    const WorkerTime& t = o.times[w];
    const bool is_slow = w == 2;
    EXPECT_NEAR(t.compute, kSteps * c * (is_slow ? 2 : 1), 1e-9 * t.compute) << w;
    EXPECT_NEAR(t.idle, is_slow ? 0.0 : kSteps * c, 1e-9 * o.sim_time) << w;
    EXPECT_NEAR(t.communication, nominal.times[w].communication, 1e-9 * o.sim_time) << w;
    EXPECT_NEAR(t.compute + t.idle + t.communication, o.sim_time, 1e-9 * o.sim_time) << w;
  }
  // Time changed, numerics did not: synchronous training waits, it does not compute differently.
  EXPECT_EQ(o.params, nominal.params);
}

TEST(HeterogeneousSync, RandomSlowdownsCostTheSlowestWorkerOfEachStep) {
  const Outcome nominal = train({});
  StragglerConfig random;
  random.step_probability = 0.3;
  random.step_slowdown = 3.0;
  random.lognormal_sigma = 0.2;
  const Outcome o = train(random);
  const double c = step_compute(nominal);
  // Each step lasts as long as its slowest worker's compute, c · max_w m(w, s), plus the allreduce.
  const StragglerModel model(random, small_run({}).config.seed);
  double extra = 0, compute[kWorkers] = {};
  for (int s = 0; s < kSteps; ++s) {
    double slowest = 0;
    for (int w = 0; w < kWorkers; ++w) {
      slowest = std::max(slowest, model.compute_multiplier(w, s));
      compute[w] += c * model.compute_multiplier(w, s);
    }
    extra += c * (slowest - 1.0);
  }
  EXPECT_GT(extra, 0.0);
  EXPECT_NEAR(o.sim_time - nominal.sim_time, extra, 1e-9 * o.sim_time);
  for (int w = 0; w < kWorkers; ++w) {
    EXPECT_NEAR(o.times[w].compute, compute[w], 1e-9 * compute[w]) << w;
    EXPECT_NEAR(o.times[w].idle, nominal.sim_time + extra - compute[w] - o.times[w].communication, 1e-9 * o.sim_time);
  }
  EXPECT_EQ(o.params, nominal.params);
}

}  // namespace
}  // namespace dtsim::sim
