// The simulator's overhead (issue 13): the wall time of a full `dtsim run` of a plain synchronous scenario
// divided by the wall time of the same gradient computations, averages, updates and evaluations, in the same
// order, in a bare loop with no simulation (the engine and platform are built, as the run builds them, but
// never run). Both start from the same prepared inputs and each runs in a forked child of its own (SimGrid
// allows one engine per process), alternating, best of `--repeats` each, so that the ratio is measured side
// by side on one machine.
//
//   dtsim_overhead_bench SCENARIO.ini [--set section.key=value]... [--repeats N]
//
// Only plain synchronous data parallelism is timed (no compression, local SGD, faults or gradient
// accumulation): the loop below is SyncDataParallel's numerics for that case, gradients computed rank after
// rank into one buffer, summed in rank order, scaled, applied.
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpu/backend.hpp"
#include "models/network.hpp"
#include "sim/app/run.hpp"
#include "sim/config/numerics_setup.hpp"
#include "sim/config/ps_config.hpp"
#include "sim/config/run_inputs.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/strategies/compute_cost.hpp"
#include "sim/strategies/parameters.hpp"
#include "sim/strategies/recorder.hpp"
#include "sim/strategies/training.hpp"
#include "sim/world/build_platform.hpp"
#include "sim/world/heterogeneity.hpp"
#include "tests/subprocess.hpp"

namespace {

using namespace dtsim;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// What a child reports: its wall seconds, then the final weights (the two must train the same model, or the
// ratio compares different work).
std::string report(double seconds, const float* params, size_t n) {
  std::vector<double> out{seconds};
  out.insert(out.end(), params, params + n);
  return testing::to_bytes(out);
}

// The full run, as `dtsim run` does it (without writing the output files).
std::string full_run(const sim::RunInputs& in) {
  const auto start = Clock::now();
  sim::MetricsLog metrics;
  const sim::RunResult r = sim::run_training(in, metrics);
  const double seconds = seconds_since(start);
  if (r.steps != in.length.total_steps) throw std::runtime_error("the full run did not finish its steps");
  return report(seconds, r.final_params.data(), r.final_params.size());
}

// The same numerics without simulating: objective, engine and platform set up as run_training sets them up.
std::string bare_loop(const sim::RunInputs& in) {
  const auto start = Clock::now();
  const sim::RunConfig& cfg = in.config;
  gpu::BackendChoice backend = gpu::make_backend(cfg.device);
  gpu::Ops<float>& ops = *backend.ops;
  models::NetworkObjective objective(models::make_network<float>(sim::network_spec(cfg, in.train)), ops, in.train,
                                     in.test, cfg.workers, cfg.batch_per_worker, in.partition, cfg.seed);
  const sim::PlatformSpec spec = sim::platform_spec(cfg);
  auto engine = sim::create_engine(sim::network_settings(spec));
  const sim::Platform platform = sim::build_platform(*engine, spec, sim::server_hosts(cfg));
  sim::HeterogeneityRuntime heterogeneity = sim::apply_heterogeneity(*engine, platform, cfg);
  const sim::ComputeCost compute(cfg, objective);
  sim::MetricsLog metrics;
  const sim::TrainingContext ctx{in, platform, objective, ops, metrics, heterogeneity,
                                 sim::resolved_compression(in), compute};

  const int64_t steps = in.length.total_steps;
  sim::TrainableParameters params(ctx);
  sim::TrainingRecorder recorder(ctx, sim::evaluation_cadence(ctx), steps,
                                 static_cast<double>(in.length.steps_per_epoch));
  recorder.record(0, params.forward(), params.numerics().activations, params.lr(0), 0);
  const size_t n = objective.num_params();
  gpu::Buffer<float> grads(ops, n), mean(ops, n);
  std::vector<double> losses(static_cast<size_t>(cfg.workers));
  for (int64_t step = 0; step < steps; ++step) {
    for (int r = 0; r < cfg.workers; ++r) {
      losses[static_cast<size_t>(r)] = objective.gradient(r, step, params.forward(), grads.data(), params.numerics());
      if (r == 0)
        ops.copy(mean.data(), grads.data(), n);
      else
        ops.axpy(1.0f, grads.data(), mean.data(), n);
    }
    if (cfg.workers > 1) ops.scale(1.0f / static_cast<float>(cfg.workers), mean.data(), n);
    params.apply(mean.data(), step);
    for (const double loss : losses) recorder.add_train_loss(loss, step + 1);
    if (recorder.due(step + 1)) recorder.record(step + 1, params.forward(), params.numerics().activations, params.lr(step), 0);
  }
  const double seconds = seconds_since(start);
  const std::vector<float> final_params = params.download();
  return report(seconds, final_params.data(), final_params.size());
}

void refuse_unless_plain_sync(const sim::RunConfig& c) {
  if (c.strategy != sim::Strategy::Sync || c.compression.active() || !c.heterogeneity.faults.events.empty() ||
      c.sync.accumulation_steps != 1)
    throw std::invalid_argument(
        "the bare loop is plain synchronous data parallelism: training.strategy = sync, no compression, no "
        "[faults], sync.accumulation_steps = 1");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: dtsim_overhead_bench SCENARIO.ini [--set section.key=value]... [--repeats N]\n");
    return 2;
  }
  std::vector<std::string> sets;
  int repeats = 3;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--set") {
      sets.push_back(argv[i + 1]);
    } else if (flag == "--repeats") {
      repeats = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "dtsim_overhead_bench: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  try {
    const sim::RunInputs in = sim::prepare_run(sim::load_scenario(argv[1], sets));
    refuse_unless_plain_sync(in.config);
    double best_full = 1e300, best_bare = 1e300;
    for (int k = 0; k < repeats; ++k) {
      const auto full = testing::from_bytes<double>(testing::run_in_child([&] { return full_run(in); }));
      const auto bare = testing::from_bytes<double>(testing::run_in_child([&] { return bare_loop(in); }));
      if (full.size() != bare.size() || !std::equal(full.begin() + 1, full.end(), bare.begin() + 1))
        throw std::runtime_error("the bare loop did not train the same weights as the run: no comparison");
      best_full = std::min(best_full, full.front());
      best_bare = std::min(best_bare, bare.front());
    }
    std::printf("%s, %d workers, %lld steps: full run %.2f s, bare loop %.2f s (best of %d); overhead ratio %.3f "
                "(goal <= 1.10)\n",
                argv[1], in.config.workers, static_cast<long long>(in.length.total_steps), best_full, best_bare,
                repeats, best_full / best_bare);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtsim_overhead_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
