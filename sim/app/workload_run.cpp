#include "sim/app/workload_run.hpp"

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "models/name_table.hpp"
#include "models/workload/catalog.hpp"
#include "models/workload/compute_time.hpp"
#include "sim/app/compute_model_json.hpp"
#include "sim/app/outputs.hpp"
#include "sim/app/workload_command.hpp"
#include "sim/app/workload_timing.hpp"
#include "sim/config/key_warnings.hpp"
#include "sim/config/numerics_setup.hpp"
#include "sim/config/workload_config.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/scenario/keys.hpp"
#include "sim/scenario/units.hpp"
#include "sim/world/link_traffic.hpp"

namespace dtsim::sim {

WorkloadRun prepare_workload_run(const Scenario& scenario) {
  WorkloadRun run;
  run.config = make_run_config(scenario);
  const KeyOrigins at = scenario.origins();
  run.ignored_keys = find_ignored_keys(run.config, at);
  run.warnings = find_key_warnings(run.config, at);
  const WorkloadConfig& wc = run.config.workload;
  run.workload = load_named_workload(wc);
  check_workload_shards(run.config, run.workload, at);
  run.setup = workload_memory_setup(run.config);
  run.memory = workload_memory_per_gpu(run.config, run.workload);
  run.fits = run.memory.total() <= run.config.gpu.memory;
  return run;
}

std::string describe_workload_run(const WorkloadRun& run) {
  const RunConfig& c = run.config;
  const WorkloadConfig& wc = c.workload;
  const std::string accumulated = c.strategy == Strategy::Sync && c.sync.accumulation_steps > 1
                                      ? " x " + std::to_string(c.sync.accumulation_steps) + " accumulated"
                                      : "";
  return run.workload.name + " on " + std::to_string(c.workers) + " x " + c.gpu.name + ", micro-batch " +
         std::to_string(wc.micro_batch) + accumulated + ", " + workload_precision_table().name(wc.precision) + ", " +
         workload_optimizer_table().name(wc.optimizer) + (wc.checkpointing ? ", activation checkpointing" : "") +
         ", " + to_string(c.strategy) + ", timing only";
}

std::string run_workload(const WorkloadRun& run, const std::string& staging, const std::function<double()>& wall_time) {
  const RunConfig& c = run.config;
  const models::DeviceRates peak{c.gpu.peak(workload_math(c.workload.precision)), c.gpu.memory_bandwidth,
                                 c.gpu.launch_overhead};
  LinkTraffic traffic;  // links.csv's ledger (output.links)
  const LinkTraffic::Scope traffic_scope(c.links ? &traffic : nullptr);
  const SimulationSummary r =
      summarize_steps(run.workload, run.setup, peak, simulate_workload_steps(run.workload, run.setup, c, c.workload.steps));
  if (c.links) write_file_atomically(staging, "links.csv", traffic.csv(r.sim.end_s));

  // metrics.csv: when each step ended on every worker.
  std::string rows = "step,sim_time_s\n";
  for (size_t s = 0; s < r.sim.timing.step_end_s.size(); ++s)
  {
    char cell[32];
    std::snprintf(cell, sizeof cell, "%.9g", r.sim.timing.step_end_s[s]);
    rows += std::to_string(s + 1) + "," + cell + "\n";
  }
  write_file_atomically(staging, "metrics.csv", rows);

  nlohmann::ordered_json s;
  s["status"] = "completed";
  s["status_reason"] = "every planned step ran (timing only: no numerics)";
  s["mode"] = "timing-only";
  s["scenario"] = c.scenario_path;
  s["workload"] = {{"name", run.workload.name}, {"title", run.workload.title},
                   {"parameters", run.workload.parameters()}, {"trainable", run.workload.trainable()},
                   {"micro_batch", c.workload.micro_batch}, {"checkpointing", c.workload.checkpointing},
                   {"precision", workload_precision_table().name(c.workload.precision)},
                   {"optimizer", workload_optimizer_table().name(c.workload.optimizer)}};
  s["memory_per_gpu"] = {{"weights", run.memory.weights}, {"master_weights", run.memory.master_weights},
                         {"gradients", run.memory.gradients}, {"optimizer", run.memory.optimizer},
                         {"activations", run.memory.activations}, {"total", run.memory.total()},
                         {"gpu_memory", c.gpu.memory}, {"fits", run.fits}};
  s["compute_model"] = compute_model_json(c, workload_math(c.workload.precision));
  s["framework"] = c.framework.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.framework);
  s["simulation"] = simulation_json(r, c.workload.steps);
  if (c.links)
    if (const auto busiest = traffic.busiest(r.sim.end_s)) s["busiest_link"] = link_json(*busiest);
  s["simulated_time_s"] = r.sim.end_s;
  s["wall_time_s"] = wall_time();
  nlohmann::json ignored = nlohmann::json::array();
  for (const IgnoredKey& k : run.ignored_keys)
    ignored.push_back({{"key", k.key}, {"reason", k.reason}, {"where", k.where.describe()}});
  s["ignored_keys"] = ignored;
  s["scenario_keys"] = c.scenario_json;
  s["sets"] = c.command_line_sets;
  s["dtsim_version"] = dtsim_version();
  write_file_atomically(staging, "summary.json", s.dump(2) + "\n");

  std::string text = "Summary of " + c.name + " (" + run.workload.title + ")\n";
  text += "  memory/GPU   " + format_quantity(run.memory.total(), Dimension::Bytes) + " of " +
          format_quantity(c.gpu.memory, Dimension::Bytes) + (run.fits ? "" : " (does not fit)") + "\n";
  text += simulation_text(run.workload, r, c.workload.steps, run.fits);
  return text;
}

}  // namespace dtsim::sim
