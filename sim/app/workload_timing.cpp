#include "sim/app/workload_timing.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "sim/app/run.hpp"
#include "sim/app/workload_strategies.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/collectives/registry.hpp"
#include "sim/config/ignored_keys.hpp"
#include "sim/config/numerics_setup.hpp"
#include "sim/config/run_config.hpp"
#include "sim/config/ps_config.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/text.hpp"
#include "sim/world/build_platform.hpp"
#include "sim/world/heterogeneity.hpp"

namespace dtsim::sim {
namespace {

// The keys --set may give a timing-only run: those a workload scenario's run reads, less the ones the command's
// own flags stand for ([workload]) and those with no meaning here (the run's name, the strategy).
bool read_by_timing(const std::string& key) {
  const std::string section = key.substr(0, key.find('.'));
  return read_by_workload_run(key, Strategy::Sync) && section != "workload" && section != "run" && section != "training" &&
         section != "output";
}

// printf into a std::string.
template <class... Args>
void append(std::string& out, const char* format, Args... args) {
  char line[512];
  std::snprintf(line, sizeof line, format, args...);
  out += line;
}

}  // namespace

SimulatedSteps simulate_workload_steps(const models::Workload& w, const models::MemorySetup& setup,
                                       WorkloadPrecision precision, const std::vector<std::string>& sets,
                                       const std::vector<std::string>& set_flags, int steps) {
  const auto is_seed = [](const std::string& key) { return key == "run.seed" || key == "run.heterogeneity_seed"; };
  std::vector<std::string> seeds;  // the seed keys set, checked once the stragglers are known
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const std::string key = sets[i].substr(0, sets[i].find('='));
    const std::string where = set_flags[i] == "--set" ? key : set_flags[i];
    if (key.rfind("faults.", 0) == 0)
      throw InputError("command line", where, "a timing-only run of a workload does not simulate failures",
                       "leave [faults] out, or train a built-in model through them with dtsim run");
    // As dtsim run refuses them: the catalog's memory, price and power figures assume one kind of GPU.
    if (key == "cluster.groups")
      throw InputError("command line", where, "a timing-only run of a workload does not support node groups yet",
                       "describe the cluster with --gpus (cluster.workers) and cluster.gpus_per_node, one --gpu for all");
    if (is_seed(key)) {
      seeds.push_back(where);
      continue;
    }
    if (!read_by_timing(key))
      throw InputError("command line", where, "has no effect on a timing-only run of a workload",
                       "set cluster, fabric, gpu, network, collective, stragglers or background keys, compute.matmul, "
                       "compute.host_dispatch, compute.cuda_graphs, sync.bucket_size, sync.overlap, "
                       "sync.prefetch_units or sync.accumulation_steps");
  }
  // The job's math mode as compute.math, so that the configuration checks compute.matmul = tiles against the
  // rate of the products this job runs (a scenario without [workload] charges compute.math).
  std::vector<std::string> all_sets = sets, all_flags = set_flags;
  all_sets.push_back(std::string("compute.math=") + to_string(workload_math(precision)));
  all_flags.push_back("--precision");
  const Scenario scenario = parse_scenario("dtsim workload", "", all_sets, default_profile_dir(), all_flags);
  RunConfig cfg = make_run_config(scenario);
  cfg.workload.precision = precision;
  // Every key by dtsim run's rules for the same run, with --zero as sync.zero_stage: a key the run would not
  // read is refused, never ignored. Under ZeRO a step calls no allreduce (its reduce-scatters and all-gathers run
  // as rings), so the algorithm keys do nothing; only stage 3 gathers weights ahead (sync.prefetch_units); the
  // tile keys do nothing under the roofline, nor gpu.efficiency under tiles.
  RunConfig as_run = cfg;
  as_run.sync.zero_stage = setup.zero_stage;
  as_run.workload.name = w.name;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const std::string key = sets[i].substr(0, sets[i].find('='));
    if (is_seed(key)) continue;  // checked below, once the stragglers are known
    std::string why = why_ignored(key, as_run);
    if (why.empty()) continue;
    // Said in the flag this command takes.
    const std::string stage_key = "sync.zero_stage = ";
    if (const size_t at = why.find(stage_key); at != std::string::npos) why.replace(at, stage_key.size(), "--zero ");
    if (const size_t at = why.find("cluster.workers = 1"); at != std::string::npos)
      why.replace(at, std::string("cluster.workers = 1").size(), "--gpus 1");
    throw InputError("command line", set_flags[i] == "--set" ? key : set_flags[i], why, "leave it out");
  }
  // The seeds draw the slow workers of stragglers.slow_fraction and the slowed steps; without them, nothing.
  const StragglerConfig& stragglers = cfg.heterogeneity.stragglers;
  if (!seeds.empty() && !stragglers.chosen_at_random && !stragglers.has_random_slowdowns())
    throw InputError("command line", seeds.front(), "has no effect on a timing-only run of a workload without stragglers",
                     "set stragglers.slow_fraction or stragglers.step_probability, or leave the seed out");
  return simulate_workload_steps(w, setup, cfg, steps);
}

SimulatedSteps simulate_workload_steps(const models::Workload& w, const models::MemorySetup& setup,
                                       const RunConfig& cfg, int steps) {
  const PlatformSpec spec = platform_spec(cfg);
  auto engine = create_engine(network_settings(spec));
  reclaim_stop_signals();  // a timing-only `dtsim run`: a stop signal leaves nothing, like SIGTERM
  const Platform platform = build_platform(*engine, spec, server_hosts(cfg));
  // [stragglers] and [background] (a timing-only run refuses [faults]): slow hosts, link profiles, competing
  // flows, and the per-step draws the timing actors multiply their FLOPs by.
  const HeterogeneityRuntime heterogeneity = apply_heterogeneity(*engine, platform, cfg);
  const StragglerModel* stragglers =
      cfg.heterogeneity.stragglers.has_random_slowdowns() ? &heterogeneity.stragglers() : nullptr;

  SimulatedSteps out;
  out.workers = platform.num_workers();
  out.platform = platform.description;
  out.gpu = cfg.gpu;
  out.fabric = cfg.fabric;
  // The job's rates as a run charges them (run_device_rates): products at the profile's sustained fraction of
  // the peak in the job's math or, with compute.matmul = tiles, from their shapes on the GPU's matrix unit;
  // memory-bound kernels at gpu.memory_efficiency of the bandwidth under tiles; the host's dispatch per kernel
  // and CUDA graphs (compute.host_dispatch, compute.cuda_graphs).
  const models::DeviceRates rates =
      run_device_rates(cfg.gpu, workload_math(cfg.workload.precision), cfg.matmul, cfg.kernel_issue);
  // Times become FLOPs at the first worker's speed, so that each host runs them at its own speed.
  const double speed = platform.workers.front()->get_speed();
  TimingSpec t = timing_spec(w, setup, rates, speed);
  t.steps = steps;
  t.bucket_bytes = cfg.sync.bucket_bytes;
  t.overlap = cfg.sync.overlap;
  t.prefetch_units = cfg.sync.prefetch_units;
  // The same GPU's compute without any communication (with ZeRO, its shard of the optimizer step): scaling
  // efficiency then measures what the network costs.
  const models::StepCompute alone = models::step_compute(w, setup, rates);
  out.strategy = cfg.strategy;
  out.busy_gpus = out.workers;
  // Gradient accumulation (sync): m micro-batches' forward and backward, one optimizer step.
  out.micro_batches = cfg.strategy == Strategy::Sync ? cfg.sync.accumulation_steps : 1;
  t.micro_batches = out.micro_batches;
  out.one_gpu_step_s = alone.total() + (out.micro_batches - 1) * (alone.total() - alone.optimizer);
  out.samples_per_step = static_cast<double>(setup.micro_batch) * out.micro_batches * out.workers;
  if (cfg.strategy == Strategy::AsyncPs) {
    simulate_ps_steps(out, w, setup, rates, cfg, platform, speed, stragglers, steps);
    return out;
  }
  if (cfg.strategy == Strategy::Federated) {
    simulate_fl_rounds(out, w, setup, rates, cfg, platform, speed, stragglers);
    return out;
  }

  // Fidelity auto budgets the flows of every collective a step calls: the buckets and ZeRO's all-gather (local
  // SGD: one model average at most).
  CollectiveOptions options = collective_options(cfg);
  // Stage 3 gathers each bucket's weights twice (forward and backward) and a frozen tail's.
  const size_t buckets = timing_buckets(t).size();
  options.calls_per_step = cfg.strategy == Strategy::Local && cfg.sync.sync_until_step == 0 ? 1
                           : t.zero_stage == 3             ? (3 * buckets + 2) * cfg.sync.accumulation_steps
                                                           : buckets + (t.zero_stage > 0 ? 1 : 0);
  std::string described;
  const MakeCollective make = [&](CollectiveKind kind, const std::string& name) {
    try {
      // ZeRO's reduce-scatters and all-gathers run as rings, as NCCL runs them.
      const Algorithm algorithm = kind == CollectiveKind::Allreduce ? cfg.collectives.algorithm : Algorithm::Ring;
      auto c = make_collective(kind, algorithm, cfg.collectives.fidelity, platform, name, options);
      if (described.empty()) described = c->describe();
      return c;
    } catch (const CollectiveError& e) {
      throw InputError("collective", collective_key_of(e.cause()), e.reason(), e.hint());
    }
  };
  if (cfg.strategy == Strategy::Local) {
    simulate_local_sgd_steps(out, w, setup, rates, cfg, platform, speed, stragglers, steps, make);
    out.collective = described;
    return out;
  }
  t.stragglers = stragglers;
  t.one_rank_may_stand_in = cfg.heterogeneity.empty();  // slow hosts, draws and competing flows make ranks differ
  out.timing = run_sync_timing(platform, t, make);
  out.collective = described;
  const auto& ends = out.timing.step_end_s;
  // The first step also fills the pipeline of buckets and builds the collectives' plans.
  out.step_s = ends.size() > 1 ? (ends.back() - ends.front()) / static_cast<double>(ends.size() - 1) : ends.front();
  out.end_s = ends.back();
  return out;
}

SimulationSummary summarize_simulation(const models::Workload& w, const models::MemorySetup& setup,
                                       WorkloadPrecision precision, const models::DeviceRates& rates,
                                       const std::vector<std::string>& sets, const std::vector<std::string>& set_flags,
                                       int steps) {
  return summarize_steps(w, setup, rates, simulate_workload_steps(w, setup, precision, sets, set_flags, steps));
}

SimulationSummary summarize_steps(const models::Workload& w, const models::MemorySetup& setup,
                                  const models::DeviceRates& rates, const SimulatedSteps& steps) {
  SimulationSummary r;
  r.sim = steps;
  const double samples = r.sim.samples_per_step;
  r.samples_per_second = samples / r.sim.step_s;
  r.tokens_per_second = r.samples_per_second * w.tokens_per_sample;
  r.mfu = models::model_flops_utilisation(w, samples, r.sim.step_s, rates.matmul_flops * r.sim.workers);
  // Against the GPUs that compute in a step, each alone: a step's micro-batches per one_gpu_step_s.
  r.scaling = r.samples_per_second * r.sim.one_gpu_step_s / (setup.micro_batch * r.sim.micro_batches * r.sim.busy_gpus);
  const bool tokens = w.sample == "sequence";
  r.unit = tokens ? "billion tokens" : "million samples";
  r.seconds_per_unit = tokens ? 1e9 / r.tokens_per_second : 1e6 / r.samples_per_second;
  const double gpu_hours = r.sim.workers * r.seconds_per_unit / 3600.0;
  // The network's price per GPU-hour adds to the GPU's (the configuration checks that they share a currency).
  const FabricSpec& f = r.sim.fabric;
  const bool network = network_price_applies(r.sim.gpu, f);
  r.cost_low = (r.sim.gpu.price_low + (network ? f.price_low : 0.0)) * gpu_hours;
  r.cost_high = (r.sim.gpu.price_high + (network ? f.price_high : 0.0)) * gpu_hours;
  // Busy power while computing, idle power otherwise (as a training run counts it): the GPUs that compute in a
  // step for their compute share of it, every GPU idle for the rest (a federated round's unselected clients
  // for all of it).
  const double busy_share = r.sim.step_s > 0 ? std::clamp(r.sim.timing.compute_s / r.sim.step_s, 0.0, 1.0) : 1.0;
  r.busy_share = busy_share;
  const double watts = r.sim.busy_gpus * (r.sim.gpu.power_busy * busy_share + r.sim.gpu.power_idle * (1.0 - busy_share)) +
                       (r.sim.workers - r.sim.busy_gpus) * r.sim.gpu.power_idle;
  r.energy_kwh = watts * r.seconds_per_unit / 3.6e6;
  return r;
}

std::string simulation_text(const models::Workload& w, const SimulationSummary& r, int steps, bool fits) {
  const SimulatedSteps& sim = r.sim;
  std::string out;
  const nlohmann::ordered_json& d = sim.details;
  const char* per = "per step and GPU";
  if (sim.strategy == Strategy::AsyncPs) {
    append(out, "  simulated    %d steps' worth of gradients (%d) on an asynchronous parameter server, timing only, on %s\n",
           steps, steps * sim.workers, sim.platform.c_str());
    append(out, "               %s; staleness mean %s, max %s\n", sim.collective.c_str(),
           printf_number("%.3g", d["mean_staleness"].get<double>()).c_str(), printf_number("%.0f", d["max_staleness"].get<double>()).c_str());
    append(out, "               %d gradients (one per worker) every %s ms (one GPU alone: a step every %s ms): "
                "scaling efficiency %s %%\n", sim.workers, printf_number("%.4g", sim.step_s * 1e3).c_str(),
           printf_number("%.4g", sim.one_gpu_step_s * 1e3).c_str(), printf_number("%.1f", 100 * r.scaling).c_str());
    per = "per gradient and worker";
  } else if (sim.strategy == Strategy::Federated) {
    append(out, "  simulated    %s rounds of federated learning (%s, %s of %d clients), timing only, on %s\n",
           printf_number("%.0f", d["rounds"].get<double>()).c_str(), d["algorithm"].get<std::string>().c_str(),
           printf_number("%.0f", d["clients_per_round"].get<double>()).c_str(), sim.workers, sim.platform.c_str());
    append(out, "               reports kept %s; dropped: %s over-committed, %s stragglers, %s at the deadline; "
                "rounds with nobody available %s\n",
           printf_number("%.0f", d["reports_kept"].get<double>()).c_str(), printf_number("%.0f", d["dropped_overcommit"].get<double>()).c_str(),
           printf_number("%.0f", d["dropped_stragglers"].get<double>()).c_str(),
           printf_number("%.0f", d["dropped_deadline"].get<double>()).c_str(), printf_number("%.0f", d["empty_rounds"].get<double>()).c_str());
    append(out, "               round %s s (one GPU alone: a local step every %s ms): scaling efficiency %s %%\n",
           printf_number("%.4g", sim.step_s).c_str(), printf_number("%.4g", sim.one_gpu_step_s * 1e3).c_str(),
           printf_number("%.1f", 100 * r.scaling).c_str());
    per = "per round and selected client";
  } else if (sim.strategy == Strategy::Local) {
    append(out, "  simulated    %d steps of local SGD averaging every %s steps, timing only, on %s\n", steps,
           printf_number("%.0f", d["local_steps"].get<double>()).c_str(), sim.platform.c_str());
    append(out, "               %s model averages, each a %s\n", printf_number("%.0f", d["averagings"].get<double>()).c_str(),
           sim.collective.c_str());
    append(out, "               step %s ms on average (one GPU alone: %s ms): scaling efficiency %s %%\n",
           printf_number("%.4g", sim.step_s * 1e3).c_str(), printf_number("%.4g", sim.one_gpu_step_s * 1e3).c_str(),
           printf_number("%.1f", 100 * r.scaling).c_str());
  } else {
    append(out, "  simulated    %d steps of synchronous data parallelism, timing only, on %s\n", steps,
           sim.platform.c_str());
    if (sim.micro_batches > 1)
      append(out, "               %d micro-batches accumulated per step: forward and backward %d times, one allreduce\n",
             sim.micro_batches, sim.micro_batches);
    append(out, "               %d gradient bucket%s, each a %s\n", sim.timing.buckets, sim.timing.buckets == 1 ? "" : "s",
           sim.collective.c_str());
    if (sim.timing.one_rank_for_all)
      append(out, "               one rank simulated for all %d: identical GPUs and analytic collectives run the same "
                  "timeline\n", sim.workers);
    append(out, "               step %s ms (one GPU alone: %s ms): scaling efficiency %s %%\n",
           printf_number("%.4g", sim.step_s * 1e3).c_str(), printf_number("%.4g", sim.one_gpu_step_s * 1e3).c_str(),
           printf_number("%.1f", 100 * r.scaling).c_str());
  }
  const std::string waiting =
      sim.timing.waiting_s > 0 ? ", waiting for the slowest " + printf_number("%.4g", sim.timing.waiting_s * 1e3) + " ms" : "";
  append(out, "               %s: compute %s ms, %s %s ms%s\n", per, printf_number("%.4g", sim.timing.compute_s * 1e3).c_str(),
         sim.strategy == Strategy::Sync ? "exposed communication" : "communication",
         printf_number("%.4g", sim.timing.exposed_s * 1e3).c_str(), waiting.c_str());
  const std::string tokens = w.sample == "sequence" ? " = " + printf_number("%.4g", r.tokens_per_second) + " tokens/s" : "";
  append(out, "               %s %ss/s in all%s, model FLOPs utilisation %s %%\n",
         printf_number("%.4g", r.samples_per_second).c_str(), w.sample.c_str(), tokens.c_str(), printf_number("%.1f", 100 * r.mfu).c_str());
  append(out, "               %s h per %s\n", printf_number("%.4g", r.seconds_per_unit / 3600).c_str(), r.unit.c_str());
  if (!fits) append(out, "               warning: the job does not fit in GPU memory; timed anyway\n");
  const GpuSpec& g = sim.gpu;
  const FabricSpec& f = sim.fabric;
  const bool network = network_price_applies(g, f);
  const double low = g.price_low + (network ? f.price_low : 0.0), high = g.price_high + (network ? f.price_high : 0.0);
  if (g.has_price())
    append(out, "               cost at %g-%g %s per GPU-hour (%s)%s: %s-%s per %s, %s-%s per hour\n", low, high,
           g.price_currency.c_str(), g.price_region.c_str(),
           network ? (", of which the network " + printf_number("%g", f.price_low) + "-" + printf_number("%g", f.price_high)).c_str() : "",
           printf_number("%.4g", r.cost_low).c_str(), printf_number("%.4g", r.cost_high).c_str(), r.unit.c_str(),
           printf_number("%.4g", low * sim.workers).c_str(), printf_number("%.4g", high * sim.workers).c_str());
  // Federated rounds keep only the round's clients busy: said, so that the share is read per computing GPU.
  const std::string computing = sim.busy_gpus < sim.workers ? " (" + std::to_string(sim.busy_gpus) + " of the " +
                                                                  std::to_string(sim.workers) + " GPUs; the others idle)"
                                                            : "";
  if (g.has_power())
    append(out, "               energy at %g W per GPU computing (%s %% of the time)%s, %g W idle: %s kWh per %s\n",
           g.power_busy, printf_number("%.1f", 100 * r.busy_share).c_str(), computing.c_str(), g.power_idle,
           printf_number("%.4g", r.energy_kwh).c_str(), r.unit.c_str());
  return out;
}

namespace {

// The simulator's own wall time per step after the first (which also builds the collectives' plans).
double wall_per_step(const std::vector<double>& wall) {
  return wall.size() > 1 ? (wall.back() - wall.front()) / static_cast<double>(wall.size() - 1) : 0.0;
}

}  // namespace

nlohmann::ordered_json simulation_json(const SimulationSummary& r, int steps) {
  nlohmann::ordered_json j = {{"strategy", to_string(r.sim.strategy)}, {"steps", steps}, {"workers", r.sim.workers}, {"platform", r.sim.platform},
          {"collective", r.sim.collective}, {"buckets", r.sim.timing.buckets},
          {"one_rank_for_all", r.sim.timing.one_rank_for_all}, {"step_s", r.sim.step_s},
          {"one_gpu_step_s", r.sim.one_gpu_step_s}, {"micro_batches_per_step", r.sim.micro_batches}, {"scaling_efficiency", r.scaling},
          {"compute_s_per_step", r.sim.timing.compute_s}, {"exposed_communication_s_per_step", r.sim.timing.exposed_s},
          {"waiting_for_slowest_s_per_step", r.sim.timing.waiting_s},
          {"samples_per_second", r.samples_per_second}, {"tokens_per_second", r.tokens_per_second},
          {"model_flops_utilisation", r.mfu}, {"bytes_sent", r.sim.timing.bytes_sent}, {"unit", r.unit},
          {"seconds_per_unit", r.seconds_per_unit}, {"cost_per_unit", r.sim.gpu.has_price() ? nlohmann::json{r.cost_low, r.cost_high} : nlohmann::json(nullptr)},
          {"network_price_per_gpu_hour", network_price_applies(r.sim.gpu, r.sim.fabric)
                                             ? nlohmann::json{r.sim.fabric.price_low, r.sim.fabric.price_high}
                                             : nlohmann::json(nullptr)},
          {"currency", r.sim.gpu.has_price() ? nlohmann::json(r.sim.gpu.price_currency) : nlohmann::json(nullptr)},
          {"energy_kwh_per_unit", r.sim.gpu.has_power() ? nlohmann::json(r.energy_kwh) : nlohmann::json(nullptr)},
          {"wall_s_per_step", wall_per_step(r.sim.timing.step_wall_s)}};
  if (!r.sim.details.empty()) j[to_string(r.sim.strategy)] = r.sim.details;
  return j;
}

}  // namespace dtsim::sim
