// A simulation that deadlocks is a dtsim bug, never a result: run_training_with must end it with an internal
// error (std::runtime_error, which `dtsim` turns into exit status 1) that names the simulated time, not hang,
// crash, or return a run that looks completed. No valid input reaches this path any more, so the test makes
// one on purpose: an objective whose gradient for one worker waits on a mailbox nobody ever sends to. The
// other workers then wait for that worker in the collective (sync) or the server waits for its gradient
// (parameter server), and SimGrid finds every actor blocked.
#include <gtest/gtest.h>

#include <simgrid/s4u.hpp>

#include <string>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/objective.hpp"
#include "sim/app/run.hpp"
#include "sim/scenario/errors.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

namespace sg4 = simgrid::s4u;

// The quadratic of validation.md §1, except that `stuck_worker`'s gradient for its step `stuck_step` never
// returns: the actor computing it blocks forever on an empty mailbox.
class DeadlockingObjective final : public models::Objective<float> {
 public:
  DeadlockingObjective(gpu::Ops<float>& ops, int stuck_worker, int64_t stuck_step)
      : inner_(ops, {{0.0f}, {1.0f}}, {0.3f}, {0.5, 0.5}), stuck_worker_(stuck_worker), stuck_step_(stuck_step) {}

  std::string description() const override { return "deadlocking quadratic"; }
  size_t num_params() const override { return inner_.num_params(); }
  const std::vector<models::ParamTensor>& param_tensors() const override { return inner_.param_tensors(); }
  void init_params(float* host_params, uint64_t seed) const override { inner_.init_params(host_params, seed); }
  double gradient(int worker, int64_t step, const float* params, float* grads,
                  const models::NumericsOptions& numerics) override {
    if (worker == stuck_worker_ && step == stuck_step_) (void)sg4::Mailbox::by_name("nobody-sends-here")->get<int>();
    return inner_.gradient(worker, step, params, grads, numerics);
  }
  double flops_per_gradient(int worker) const override { return inner_.flops_per_gradient(worker); }
  double sample_weight(int worker) const override { return inner_.sample_weight(worker); }
  models::EvalResult evaluate(const float* params, models::NumberFormat activations) override {
    return inner_.evaluate(params, activations);
  }

 private:
  models::QuadraticObjective inner_;
  int stuck_worker_;
  int64_t stuck_step_;
};

RunInputs two_worker_run(Strategy strategy) {
  RunInputs in;
  RunConfig& c = in.config;
  c.name = "deadlock";
  c.seed = 5;
  c.workers = 2;
  c.gpu = {"test-gpu", 10e12, 10e12, 10e12, 40e9, 0.5};
  c.fabric = {"test-fabric", 25e9, 1e-6, 0.0, 1.0};
  c.strategy = strategy;
  c.lr = 0.1;
  c.momentum = 0.0;
  c.batch_per_worker = 1;
  c.epochs = 1;
  c.max_steps = 20;
  c.evals_per_epoch = 20;
  in.length = {20, 20};
  return in;
}

struct Ending {
  std::string kind;  // "returned <status>", "input error" or "runtime error"
  std::string message;
};

Ending run_until_stuck(Strategy strategy) {
  const std::string out = dtsim::testing::run_in_child([strategy] {
    const RunInputs in = two_worker_run(strategy);
    gpu::CpuOps<float> ops;
    DeadlockingObjective objective(ops, /*stuck_worker=*/1, /*stuck_step=*/3);
    MetricsLog metrics;
    try {
      const RunResult r = run_training_with(in, metrics, ops, objective);
      return std::string("returned ") + to_string(r.status) + "\n" + r.status_reason;
    } catch (const InputError& e) {
      return std::string("input error\n") + e.what();
    } catch (const std::runtime_error& e) {
      return std::string("runtime error\n") + e.what();
    }
  });
  const size_t eol = out.find('\n');
  return {out.substr(0, eol), eol == std::string::npos ? "" : out.substr(eol + 1)};
}

TEST(RunDeadlock, SyncAllreduceDeadlockIsAnInternalErrorNamingTheSimulatedTime) {
  const Ending end = run_until_stuck(Strategy::Sync);
  EXPECT_EQ(end.kind, "runtime error") << end.message;
  EXPECT_NE(end.message.find("the simulation deadlocked at simulated time "), std::string::npos) << end.message;
  EXPECT_NE(end.message.find("a dtsim bug"), std::string::npos) << end.message;
}

TEST(RunDeadlock, ParameterServerDeadlockIsAnInternalErrorToo) {
  const Ending end = run_until_stuck(Strategy::AsyncPs);
  EXPECT_EQ(end.kind, "runtime error") << end.message;
  EXPECT_NE(end.message.find("deadlocked"), std::string::npos) << end.message;
}

}  // namespace
}  // namespace dtsim::sim
