#include "config.hpp"

#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

const char* to_string(MathMode m) {
  switch (m) {
    case MathMode::Fp32: return "fp32";
    case MathMode::Tf32: return "tf32";
    case MathMode::Bf16: return "bf16";
  }
  return "?";
}

RunConfig make_run_config(const Scenario& s) {
  RunConfig c;
  c.name = s.text("run.name");
  c.scenario_path = s.path();
  c.seed = static_cast<uint64_t>(s.integer("run.seed"));

  c.workers = static_cast<int>(s.integer("cluster.workers"));
  c.topology = s.text("cluster.topology");

  c.gpu.name = s.text("gpu.name").empty() ? s.text("gpu.profile") : s.text("gpu.name");
  c.gpu.peak_fp32 = s.quantity("gpu.peak_fp32");
  c.gpu.peak_tf32 = s.quantity("gpu.peak_tf32");
  c.gpu.peak_bf16 = s.quantity("gpu.peak_bf16");
  c.gpu.memory = s.quantity("gpu.memory");
  c.gpu.efficiency = s.real("gpu.efficiency");

  c.fabric.name = s.text("fabric.name").empty() ? s.text("fabric.profile") : s.text("fabric.name");
  c.fabric.bandwidth = s.quantity("fabric.bandwidth");
  c.fabric.link_latency = s.quantity("fabric.link_latency");
  c.fabric.switch_latency = s.quantity("fabric.switch_latency");
  c.fabric.efficiency = s.real("fabric.efficiency");

  c.network_model = s.text("network.model");
  c.crosstraffic = s.boolean("network.crosstraffic");
  const std::string math = s.text("compute.math");
  c.math = math == "tf32" ? MathMode::Tf32 : math == "bf16" ? MathMode::Bf16 : MathMode::Fp32;

  c.hidden.clear();
  for (const int64_t h : s.int_list("model.hidden")) c.hidden.push_back(static_cast<int>(h));
  c.dataset = s.text("data.dataset");
  c.data_path = s.text("data.path");
  c.train_samples = static_cast<int>(s.integer("data.train_samples"));
  c.test_samples = static_cast<int>(s.integer("data.test_samples"));

  c.strategy = s.text("training.strategy");
  c.batch_per_worker = static_cast<int>(s.integer("training.batch_per_worker"));
  c.epochs = static_cast<int>(s.integer("training.epochs"));
  c.max_steps = s.integer("training.max_steps");
  c.lr = s.real("training.lr");
  c.momentum = s.real("training.momentum");
  c.weight_decay = s.real("training.weight_decay");
  c.nesterov = s.boolean("training.nesterov");
  c.collective = s.text("collective.algorithm");
  c.evals_per_epoch = static_cast<int>(s.integer("eval.per_epoch"));
  c.save_model = s.boolean("output.save_model");

  if (static_cast<int64_t>(c.workers) * c.batch_per_worker > (int64_t{1} << 31))
    s.fail("training.batch_per_worker", "global batch (workers × batch_per_worker) is too large");
  c.scenario_json = s.to_json();
  return c;
}

}  // namespace dtsim::sim
