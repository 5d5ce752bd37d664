#include "sim/app/workload_timing.hpp"

#include <memory>

#include "sim/collectives/collective.hpp"
#include "sim/collectives/registry.hpp"
#include "sim/config/run_config.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/build_platform.hpp"

namespace dtsim::sim {
namespace {

// The keys a timing-only run reads: the cluster and its hardware, the collectives, DDP's buckets.
bool read_by_timing(const std::string& key) {
  const std::string section = key.substr(0, key.find('.'));
  return section == "cluster" || section == "fabric" || section == "gpu" || section == "network" ||
         section == "collective" || key == "sync.bucket_size" || key == "sync.overlap";
}

}  // namespace

SimulatedSteps simulate_workload_steps(const models::Workload& w, const models::MemorySetup& setup,
                                       models::DeviceRates rates, const std::vector<std::string>& sets,
                                       const std::vector<std::string>& set_flags, int steps) {
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const std::string key = sets[i].substr(0, sets[i].find('='));
    if (!read_by_timing(key))
      throw InputError("command line", set_flags[i] == "--set" ? key : set_flags[i],
                       "has no effect on a timing-only run of a workload",
                       "set cluster, fabric, gpu, network or collective keys, sync.bucket_size or sync.overlap");
  }
  const Scenario scenario = parse_scenario("dtsim workload", "", sets, default_profile_dir(), set_flags);
  const RunConfig cfg = make_run_config(scenario);
  const PlatformSpec spec = platform_spec(cfg);
  auto engine = create_engine(network_settings(spec));
  const Platform platform = build_platform(*engine, spec);

  SimulatedSteps out;
  out.workers = platform.num_workers();
  out.platform = platform.description;
  out.gpu = cfg.gpu;
  out.fabric = cfg.fabric;
  // The products run at the profile's sustained fraction of the peak, as a run charges them.
  rates.matmul_flops *= cfg.gpu.efficiency;
  const double e = setup.activation_bytes, b = setup.micro_batch;
  // Times become FLOPs at the first worker's speed, so that each host runs them at its own speed.
  const double speed = platform.workers.front()->get_speed();
  TimingSpec t;
  t.steps = steps;
  t.bucket_bytes = cfg.sync.bucket_bytes;
  t.overlap = cfg.sync.overlap;
  t.bytes_per_value = setup.gradient_bytes;
  std::size_t offset = 0;
  std::vector<std::size_t> offsets;
  for (const auto& l : w.layers) {
    offsets.push_back(offset);
    offset += l.trainable;
    t.forward_flops += models::layer_forward_seconds(l, b, e, rates) * speed;
  }
  for (std::size_t i = w.layers.size(); i-- > 0;) {
    const auto& l = w.layers[i];
    double seconds = models::layer_backward_seconds(l, b, e, rates);
    if (setup.checkpointing && l.recomputed_with_checkpointing()) seconds += models::layer_forward_seconds(l, b, e, rates);
    t.segments.push_back({offsets[i], static_cast<std::size_t>(l.trainable), seconds * speed});
  }
  const models::StepCompute whole = models::step_compute(w, setup, rates);
  t.optimizer_flops = whole.optimizer * speed;
  out.one_gpu_step_s = whole.total();

  std::string described;
  const MakeCollective make = [&](CollectiveKind kind, const std::string& name) {
    try {
      auto c = make_collective(kind, cfg.collectives.algorithm, cfg.collectives.fidelity, platform, name,
                               cfg.collectives.options(cfg.fabric, cfg.layout));
      if (described.empty()) described = c->describe();
      return c;
    } catch (const CollectiveError& e) {
      throw InputError("collective", collective_key_of(e.cause()), e.reason(), e.hint());
    }
  };
  out.timing = run_sync_timing(platform, t, make);
  out.collective = described;
  const auto& ends = out.timing.step_end_s;
  // The first step also fills the pipeline of buckets and builds the collectives' plans.
  out.step_s = ends.size() > 1 ? (ends.back() - ends.front()) / static_cast<double>(ends.size() - 1) : ends.front();
  return out;
}

SimulationSummary summarize_simulation(const models::Workload& w, const models::MemorySetup& setup,
                                       const models::DeviceRates& rates, const std::vector<std::string>& sets,
                                       const std::vector<std::string>& set_flags, int steps) {
  SimulationSummary r;
  r.sim = simulate_workload_steps(w, setup, rates, sets, set_flags, steps);
  const double samples = setup.micro_batch * r.sim.workers;
  r.samples_per_second = samples / r.sim.step_s;
  r.tokens_per_second = r.samples_per_second * w.tokens_per_sample;
  r.mfu = models::model_flops_utilisation(w, samples, r.sim.step_s, rates.matmul_flops * r.sim.workers);
  r.scaling = r.sim.one_gpu_step_s / r.sim.step_s;
  const bool tokens = w.sample == "sequence";
  r.unit = tokens ? "billion tokens" : "million samples";
  r.seconds_per_unit = tokens ? 1e9 / r.tokens_per_second : 1e6 / r.samples_per_second;
  const double gpu_hours = r.sim.workers * r.seconds_per_unit / 3600.0;
  r.cost_low = r.sim.gpu.price_low * gpu_hours;
  r.cost_high = r.sim.gpu.price_high * gpu_hours;
  r.energy_kwh = r.sim.gpu.power_busy * r.sim.workers * r.seconds_per_unit / 3.6e6;
  return r;
}

nlohmann::ordered_json simulation_json(const SimulationSummary& r, int steps) {
  return {{"steps", steps}, {"workers", r.sim.workers}, {"platform", r.sim.platform},
          {"collective", r.sim.collective}, {"buckets", r.sim.timing.buckets}, {"step_s", r.sim.step_s},
          {"one_gpu_step_s", r.sim.one_gpu_step_s}, {"scaling_efficiency", r.scaling},
          {"compute_s_per_step", r.sim.timing.compute_s}, {"exposed_communication_s_per_step", r.sim.timing.exposed_s},
          {"samples_per_second", r.samples_per_second}, {"tokens_per_second", r.tokens_per_second},
          {"model_flops_utilisation", r.mfu}, {"bytes_sent", r.sim.timing.bytes_sent}, {"unit", r.unit},
          {"seconds_per_unit", r.seconds_per_unit}, {"cost_per_unit", {r.cost_low, r.cost_high}},
          {"currency", r.sim.gpu.price_currency}, {"energy_kwh_per_unit", r.energy_kwh}};
}

}  // namespace dtsim::sim
