// The asynchronous parameter server through the whole simulator: one worker is sequential SGD bit for bit;
// equal workers see exactly the staleness the message pattern implies; a slow worker's gradients are the
// stalest; bounded staleness holds its bound; n-softsync averages k gradients per update; staleness-aware
// learning rates scale each update by its factor (replayed in closed form on the quadratic).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "models/architectures.hpp"
#include "models/objective.hpp"
#include "models/optimizer.hpp"
#include "models/staleness.hpp"
#include "sim/config/heterogeneity_parse.hpp"
#include "sim/config/numerics_setup.hpp"
#include "tests/sim/async_ps_support.hpp"

namespace dtsim::sim {
namespace {

using ps_testing::Outcome;

// The plain loop the one-worker server must equal: objective.gradient, then the same optimizer and schedule.
std::vector<float> sequential_sgd(const RunInputs& in) {
  gpu::BackendChoice backend = gpu::make_backend(gpu::Device::Cpu);
  gpu::Ops<float>& ops = *backend.ops;
  const RunConfig& c = in.config;
  models::NetworkObjective objective(models::make_network<float>(network_spec(c, in.train)), ops, in.train, in.test,
                                     1, c.batch_per_worker, std::nullopt, c.seed);
  const size_t n = objective.num_params();
  std::vector<float> host(n);
  objective.init_params(host.data(), c.seed);
  gpu::Buffer<float> params(ops, n), grads(ops, n);
  ops.upload(params.data(), host.data(), n);
  auto optimizer = models::make_optimizer<float>(ops, objective.param_tensors(), n, optimizer_settings(c));
  const models::LrSchedule schedule(schedule_settings(c, in.length));
  for (int64_t step = 0; step < in.length.total_steps; ++step) {
    objective.gradient(0, step, params.data(), grads.data(), {});
    optimizer->step(params.data(), grads.data(), schedule.lr(step));
  }
  ops.download(host.data(), params.data(), n);
  return host;
}

class OneWorker : public ::testing::TestWithParam<int> {};

TEST_P(OneWorker, EqualsSequentialSgdBitForBit) {
  RunInputs in = ps_testing::mlp_run(1, 30);
  in.config.momentum = 0.9;
  in.config.weight_decay = 1e-3;
  in.config.ps.servers = GetParam();
  const Outcome ps = ps_testing::run(in);
  const std::vector<float> reference = sequential_sgd(in);

  ASSERT_EQ(ps.params.size(), reference.size());
  size_t differing = 0;
  for (size_t i = 0; i < reference.size(); ++i) differing += ps.params[i] != reference[i];
  EXPECT_EQ(differing, 0u) << "of " << reference.size() << " parameters";
  EXPECT_EQ(ps.details["gradients_applied"], 30);
  EXPECT_EQ(ps.details["updates"], 30);
  EXPECT_EQ(ps.details["max_staleness"], 0) << "a lone worker's gradients are never stale";
  EXPECT_EQ(ps.steps, 30);

  // The run moved the weights (so the comparison means something).
  std::vector<float> initial(reference.size());
  models::make_network<float>(network_spec(in.config, in.train))->init_params(initial.data(), in.config.seed);
  double moved = 0;
  for (size_t i = 0; i < initial.size(); ++i) moved += std::fabs(reference[i] - initial[i]);
  EXPECT_GT(moved, 1.0);
}

INSTANTIATE_TEST_SUITE_P(Shards, OneWorker, ::testing::Values(1, 2),
                         [](const auto& info) { return std::to_string(info.param) + "shards"; });

// Equal workers, zero latency: every message of a round arrives at the same instant, and a shard takes
// them in rank order, serving each worker's next pull right after applying its push. Round 1: worker w's
// gradient meets the w gradients before it (staleness w) and its next pull sees version w + 1. Every later
// round: worker w pulled version (r−1)W + w + 1 and is applied at version rW + w, staleness W − 1.
class EqualWorkers : public ::testing::TestWithParam<int> {};

TEST_P(EqualWorkers, SeeTheStalenessTheMessagePatternImplies) {
  const int workers = 4, rounds = 8, shards = GetParam();
  RunInputs in = ps_testing::mlp_run(workers, rounds);
  in.config.ps.servers = shards;
  const Outcome o = ps_testing::run(in);
  double sum = 0;
  for (int w = 0; w < workers; ++w) {
    std::vector<int64_t> expected(workers, 0);
    expected[static_cast<size_t>(w)] += shards;
    expected[workers - 1] += static_cast<int64_t>(rounds - 1) * shards;
    EXPECT_EQ(o.worker(w)["staleness_histogram"].get<std::vector<int64_t>>(), expected) << "worker " << w;
    EXPECT_EQ(o.worker(w)["gradients_applied"], rounds) << "equal workers do equal work";
    sum += w + (rounds - 1) * (workers - 1);
  }
  EXPECT_DOUBLE_EQ(o.details["mean_staleness"].get<double>(), sum / (workers * rounds));
  EXPECT_EQ(o.details["held_pulls"], 0);
  EXPECT_EQ(o.details["updates"], workers * rounds);
}

// At s = W − 1 equal workers are held for no time, but they are held: a pull waits for the peers' pushes of the
// same instant and reads the version after them. The staleness changes (each worker sees a fixed place in the
// order), the time does not, and the holds are counted (they used to be left out, with held_s 0).
TEST_P(EqualWorkers, AtABoundOfWMinusOneArePulledAfterTheirPeersPushesOfTheSameInstant) {
  const int workers = 4, rounds = 8, shards = GetParam();
  RunInputs in = ps_testing::mlp_run(workers, rounds);
  in.config.ps.servers = shards;
  const Outcome free = ps_testing::run(in);
  in.config.ps.staleness_bound = workers - 1;
  const Outcome bounded = ps_testing::run(in);
  EXPECT_GT(bounded.details["held_pulls"].get<int>(), 0);
  for (int w = 0; w < workers; ++w) {
    EXPECT_EQ(bounded.worker(w)["held_s"].get<double>(), 0.0) << "worker " << w << " held for no time";
    EXPECT_LE(bounded.worker(w)["max_staleness"].get<int>(), workers - 1);
  }
  EXPECT_LT(bounded.details["mean_staleness"].get<double>(), free.details["mean_staleness"].get<double>());
  EXPECT_EQ(bounded.details["updates"], free.details["updates"]);
}

INSTANTIATE_TEST_SUITE_P(Shards, EqualWorkers, ::testing::Values(1, 2),
                         [](const auto& info) { return std::to_string(info.param) + "shards"; });

TEST(AsyncParameterServer, AFourTimesSlowerWorkersGradientsAreTheStalest) {
  RunInputs in = ps_testing::mlp_run(4, 12);
  in.config.heterogeneity.stragglers.slow_workers = parse_slow_workers("0:0.25", 0.5, 4);  // the scenario key's form
  const Outcome o = ps_testing::run(in);
  const double slow = o.worker(0)["mean_staleness"];
  for (int w = 1; w < 4; ++w) EXPECT_GT(slow, o.worker(w)["mean_staleness"].get<double>()) << "worker " << w;
  // While it computes one gradient the other three compute about four each.
  EXPECT_GT(slow, 8.0);
  EXPECT_LT(o.worker(0)["gradients_applied"].get<int>(), o.worker(1)["gradients_applied"].get<int>());
}

class BoundedStaleness : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(BoundedStaleness, NeverAppliesAGradientStalerThanTheBound) {
  const auto [bound, shards] = GetParam();
  RunInputs in = ps_testing::mlp_run(4, 12);
  in.config.ps.servers = shards;
  in.config.ps.staleness_bound = bound;
  in.config.heterogeneity.stragglers.slow_workers = {{0, 0.25}, {1, 0.5}};
  const Outcome o = ps_testing::run(in);
  for (int w = 0; w < 4; ++w) {
    EXPECT_LE(o.worker(w)["max_staleness"].get<int>(), bound) << "worker " << w;
    EXPECT_GT(o.worker(w)["gradients_applied"].get<int>(), 0) << "worker " << w;
  }
  EXPECT_GT(o.details["held_pulls"].get<int>(), 0) << "the bound blocked nobody";
  EXPECT_EQ(o.details["gradients_applied"], 48) << "every planned gradient was applied: no deadlock";

  // Without the bound the same cluster produces staler gradients.
  in.config.ps.staleness_bound = -1;
  const Outcome free = ps_testing::run(in);
  EXPECT_GT(free.details["max_staleness"].get<int>(), bound);
}

INSTANTIATE_TEST_SUITE_P(BoundsAndShards, BoundedStaleness,
                         ::testing::Combine(::testing::Values(0, 1, 3), ::testing::Values(1, 2)),
                         [](const auto& info) {
                           return "s" + std::to_string(std::get<0>(info.param)) + "_" +
                                  std::to_string(std::get<1>(info.param)) + "shards";
                         });

TEST(AsyncParameterServer, SoftsyncAppliesOneUpdatePerKGradients) {
  RunInputs in = ps_testing::mlp_run(4, 6);
  in.config.ps.gradients_per_update = 3;
  in.config.heterogeneity.stragglers.slow_workers = {{2, 0.5}};
  const Outcome o = ps_testing::run(in);
  EXPECT_EQ(o.details["gradients_applied"], 24);
  EXPECT_EQ(o.details["updates"], 8);
  EXPECT_EQ(o.steps, 6);  // 24 gradients: six global batches' worth
  // metrics.csv counts updates: the last row is update 8.
  ASSERT_FALSE(o.rows.empty());
  EXPECT_EQ(o.rows.back().substr(0, o.rows.back().find(',')), "8");
}

// The epoch column counts gradients, not updates: with 24 gradients in updates of 5 the last update averages
// 4, and the last row's epoch is that of 24 gradients (it read 25's, 1.0312 where the run trained 1 epoch).
TEST(AsyncParameterServer, SoftsyncsEpochColumnCountsGradients) {
  const auto last_epoch = [](const Outcome& o) {
    const std::string& row = o.rows.back();
    const size_t a = row.find(',') + 1;
    return std::stod(row.substr(a, row.find(',', a) - a));
  };
  RunInputs in = ps_testing::mlp_run(4, 6);
  const Outcome plain = ps_testing::run(in);
  in.config.ps.gradients_per_update = 5;
  const Outcome soft = ps_testing::run(in);
  ASSERT_EQ(soft.details["gradients_applied"], 24);
  ASSERT_EQ(soft.details["updates"], 5) << "four of 5 gradients, then one of 4";
  EXPECT_DOUBLE_EQ(last_epoch(soft), last_epoch(plain));
  EXPECT_GT(last_epoch(plain), 0.0);
}

// ---- closed-form replays on the quadratic F_w(x) = ½‖x − t_w‖² ----------------------------------------------

constexpr size_t kDim = 6;

RunInputs quadratic_run(int workers, int rounds) {
  RunInputs in;
  RunConfig& c = in.config;
  c.name = "async-ps-quadratic";
  c.device = gpu::Device::Cpu;
  c.workers = workers;
  c.gpu = ps_testing::slow_gpu();
  c.fabric = ps_testing::zero_latency_fabric();
  c.strategy = Strategy::AsyncPs;
  c.lr = 0.3;
  c.momentum = 0.0;
  c.evals_per_epoch = 1;
  in.length.steps_per_epoch = 4;
  in.length.total_steps = rounds;
  return in;
}

std::vector<std::vector<float>> quadratic_targets(int workers) {
  std::vector<std::vector<float>> t(static_cast<size_t>(workers), std::vector<float>(kDim));
  for (int w = 0; w < workers; ++w)
    for (size_t i = 0; i < kDim; ++i) t[static_cast<size_t>(w)][i] = 0.7f * static_cast<float>(w + 1) - 0.3f * static_cast<float>(i);
  return t;
}

std::unique_ptr<models::QuadraticObjective> make_quadratic(gpu::Ops<float>& ops, int workers) {
  std::vector<float> initial(kDim);
  for (size_t i = 0; i < kDim; ++i) initial[i] = 1.0f + 0.25f * static_cast<float>(i);
  return std::make_unique<models::QuadraticObjective>(ops, quadratic_targets(workers), initial,
                                                      std::vector<double>(static_cast<size_t>(workers), 1.0));
}

struct Replay {
  gpu::BackendChoice backend = gpu::make_backend(gpu::Device::Cpu);
  std::unique_ptr<models::QuadraticObjective> objective;
  std::unique_ptr<models::Optimizer<float>> optimizer;
  std::unique_ptr<models::LrSchedule> schedule;
  std::vector<gpu::Buffer<float>> versions;  // x_0, x_1, …

  Replay(const RunInputs& in) {
    gpu::Ops<float>& ops = *backend.ops;
    objective = make_quadratic(ops, in.config.workers);
    optimizer = models::make_optimizer<float>(ops, objective->param_tensors(), kDim, optimizer_settings(in.config));
    schedule = std::make_unique<models::LrSchedule>(schedule_settings(in.config, in.length));
    std::vector<float> x0(kDim);
    objective->init_params(x0.data(), 0);
    versions.emplace_back(ops, kDim);
    ops.upload(versions.back().data(), x0.data(), kDim);
  }
  gpu::Ops<float>& ops() { return *backend.ops; }
  // x_{v+1} = x_v − lr · grad (computed by the caller into `grad`).
  void step(const gpu::Buffer<float>& grad, double lr) {
    gpu::Buffer<float> next(ops(), kDim);
    ops().copy(next.data(), versions.back().data(), kDim);
    optimizer->step(next.data(), grad.data(), lr);
    versions.push_back(std::move(next));
  }
  std::vector<float> last() {
    std::vector<float> x(kDim);
    ops().download(x.data(), versions.back().data(), kDim);
    return x;
  }
};

class StalenessAwareLr : public ::testing::TestWithParam<models::StalenessRule> {};

// Equal workers on zero latency (the order derived above): update v comes from worker v mod W, which
// pulled version 0 in the first round and version v − (W − 1) after it, and is scaled by the rule's factor.
TEST_P(StalenessAwareLr, EveryUpdateIsScaledByItsStalenessFactor) {
  const int workers = 4, rounds = 5;
  RunInputs in = quadratic_run(workers, rounds);
  in.config.ps.staleness_lr = GetParam();
  in.config.ps.staleness_exponent = 0.5;
  in.config.ps.staleness_threshold = 1.0;
  const Outcome ps = ps_testing::run_with(in, [&](gpu::Ops<float>& ops) { return make_quadratic(ops, workers); });

  Replay r(in);
  gpu::Buffer<float> grad(r.ops(), kDim);
  for (int64_t v = 0; v < workers * rounds; ++v) {
    const int64_t round = v / workers, w = v % workers;
    const int64_t pulled = round == 0 ? 0 : v - (workers - 1);
    const double factor = models::staleness_lr_factor(GetParam(), v - pulled, 0.5, 1.0);
    r.objective->gradient(static_cast<int>(w), round, r.versions[static_cast<size_t>(pulled)].data(), grad.data(), {});
    r.step(grad, r.schedule->lr(v / workers) * factor);
  }
  EXPECT_EQ(ps.params, r.last()) << "rule " << models::to_string(GetParam());
  EXPECT_EQ(ps.details["staleness_lr"], models::to_string(GetParam()));
  const double mean_factor = ps.worker(workers - 1)["mean_lr_factor"];
  if (GetParam() == models::StalenessRule::None)
    EXPECT_EQ(mean_factor, 1.0);
  else
    EXPECT_LT(mean_factor, 1.0) << "staleness 3 must lower the rate";
}

INSTANTIATE_TEST_SUITE_P(Rules, StalenessAwareLr,
                         ::testing::Values(models::StalenessRule::None, models::StalenessRule::Inverse,
                                           models::StalenessRule::Polynomial, models::StalenessRule::Hinge),
                         [](const auto& info) { return std::string(models::to_string(info.param)); });

// Two equal workers, k = 2: each update averages one gradient of each. Worker 0's next pull is served while
// its gradient waits in the buffer (the version before the update), worker 1's after it, so update u ≥ 1
// averages worker 0's gradient at x_{u−1} and worker 1's at x_u; update 0 both at x_0.
TEST(AsyncParameterServer, SoftsyncUpdateIsTheAverageOfItsGradients) {
  const int workers = 2, rounds = 6;
  RunInputs in = quadratic_run(workers, rounds);
  in.config.ps.gradients_per_update = 2;
  const Outcome ps = ps_testing::run_with(in, [&](gpu::Ops<float>& ops) { return make_quadratic(ops, workers); });

  Replay r(in);
  gpu::Buffer<float> g0(r.ops(), kDim), g1(r.ops(), kDim);
  for (int64_t u = 0; u < rounds; ++u) {
    r.objective->gradient(0, u, r.versions[static_cast<size_t>(u == 0 ? 0 : u - 1)].data(), g0.data(), {});
    r.objective->gradient(1, u, r.versions[static_cast<size_t>(u)].data(), g1.data(), {});
    r.ops().axpy(1.0f, g1.data(), g0.data(), kDim);
    r.ops().scale(0.5f, g0.data(), kDim);
    r.step(g0, r.schedule->lr(u));
  }
  EXPECT_EQ(ps.params, r.last());
  EXPECT_EQ(ps.details["updates"], rounds);
  EXPECT_EQ(ps.details["gradients_applied"], 2 * rounds);
}

}  // namespace
}  // namespace dtsim::sim
