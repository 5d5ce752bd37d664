#include "sim/config/run_config.hpp"

#include "sim/scenario/scenario.hpp"
#include "sim/scenario/text.hpp"

namespace dtsim::sim {

const char* to_string(MathMode m) {
  switch (m) {
    case MathMode::Fp32: return "fp32";
    case MathMode::Tf32: return "tf32";
    case MathMode::Bf16: return "bf16";
  }
  return "?";
}

namespace {

// Rules that involve several keys; each error points at the key a user would change.
void check_combinations(const Scenario& s, const RunConfig& c) {
  if (c.schedule.warmup_epochs > 0 && c.schedule.warmup_steps > 0)
    s.fail("training.warmup_steps", "both warmup_epochs and warmup_steps are set", "set only one of them");
  const bool synthetic = c.dataset != "fashion-mnist";
  if (synthetic && models::architecture_descriptor(c.arch).needs_images)
    s.fail("model.arch", std::string("'") + models::to_string(c.arch) + "' needs images, but data.dataset is '" + c.dataset + "'",
           "use logreg or mlp with synthetic data");
  if (c.data.partition == "natural" && !synthetic)
    s.fail("data.partition", "'natural' follows the devices of the synthetic datasets only",
           "use iid, dirichlet, labels, lognormal or groups with Fashion-MNIST");
  if (c.data.partition == "groups") {
    if (c.data.label_groups.empty())
      s.fail("data.label_groups", "data.partition = groups needs label groups", "e.g. 'medical:0-4:4; finance:5-9:4'");
    int workers = 0;
    for (const LabelGroup& g : c.data.label_groups) workers += g.workers;
    if (workers != c.workers)
      s.fail("data.label_groups", "the groups hold " + std::to_string(workers) + " workers but cluster.workers is " +
                                      std::to_string(c.workers),
             "make the worker counts add up");
  }
  if (c.data.partition == "labels" && c.data.labels_per_worker > 10 && c.dataset == "fashion-mnist")
    s.fail("data.labels_per_worker", "Fashion-MNIST has only 10 labels");
}

std::vector<int> parse_label_range(const std::string& text) {
  std::vector<int> labels;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    const size_t dash = item.find('-');
    const int64_t lo = parse_int(dash == std::string::npos ? item : item.substr(0, dash));
    const int64_t hi = dash == std::string::npos ? lo : parse_int(item.substr(dash + 1));
    if (lo < 0 || hi < lo || hi > 100000) throw ValueError("bad label range '" + item + "'", "write e.g. 0-4 or 1,3,5");
    for (int64_t l = lo; l <= hi; ++l) labels.push_back(static_cast<int>(l));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return labels;
}

}  // namespace

std::vector<LabelGroup> parse_label_groups(const std::string& text) {
  std::vector<LabelGroup> groups;
  std::vector<bool> taken;
  size_t start = 0;
  const std::string all = trim(text);
  while (!all.empty() && start <= all.size()) {
    const size_t semi = all.find(';', start);
    const std::string item = trim(all.substr(start, semi == std::string::npos ? std::string::npos : semi - start));
    start = semi == std::string::npos ? all.size() + 1 : semi + 1;
    if (item.empty()) continue;
    const size_t c1 = item.find(':'), c2 = item.rfind(':');
    if (c1 == std::string::npos || c1 == c2)
      throw ValueError("group '" + item + "' is not name:labels:workers", "write e.g. medical:0-4:4");
    LabelGroup g;
    g.name = trim(item.substr(0, c1));
    g.labels = parse_label_range(item.substr(c1 + 1, c2 - c1 - 1));
    const int64_t workers = parse_int(item.substr(c2 + 1));
    if (g.name.empty() || workers < 1) throw ValueError("group '" + item + "' needs a name and at least one worker", "");
    g.workers = static_cast<int>(workers);
    for (const int l : g.labels) {
      if (static_cast<size_t>(l) >= taken.size()) taken.resize(l + 1, false);
      if (taken[l]) throw ValueError("label " + std::to_string(l) + " is in two groups", "label sets must be disjoint");
      taken[l] = true;
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

RunConfig make_run_config(const Scenario& s) {
  RunConfig c;
  c.name = s.text("run.name");
  c.scenario_path = s.path();
  c.seed = static_cast<uint64_t>(s.integer("run.seed"));

  c.workers = static_cast<int>(s.integer("cluster.workers"));

  c.gpu = make_gpu_spec(s);
  c.fabric = make_fabric_spec(s);
  c.layout = make_cluster_config(s);
  c.heterogeneity = make_heterogeneity_config(s);
  c.collectives = make_collective_config(s);

  c.network_model = s.text("network.model");
  c.crosstraffic = s.boolean("network.crosstraffic");
  c.device = s.text("compute.device");
  const std::string math = s.text("compute.math");
  c.math = math == "tf32" ? MathMode::Tf32 : math == "bf16" ? MathMode::Bf16 : MathMode::Fp32;

  c.arch = models::parse_architecture(s.text("model.arch"));
  c.activation = s.text("model.activation");
  c.hidden.clear();
  for (const int64_t h : s.int_list("model.hidden")) c.hidden.push_back(static_cast<int>(h));
  c.dataset = s.text("data.dataset");
  c.data_path = s.text("data.path");
  c.train_samples = static_cast<int>(s.integer("data.train_samples"));
  c.test_samples = static_cast<int>(s.integer("data.test_samples"));

  DataConfig& d = c.data;
  d.synthetic_alpha = s.real("data.synthetic_alpha");
  d.synthetic_beta = s.real("data.synthetic_beta");
  d.synthetic_devices = static_cast<int>(s.integer("data.synthetic_devices"));
  d.partition = s.text("data.partition");
  d.dirichlet_alpha = s.real("data.dirichlet_alpha");
  d.labels_per_worker = static_cast<int>(s.integer("data.labels_per_worker"));
  d.lognormal_sigma = s.real("data.lognormal_sigma");
  try {
    d.label_groups = parse_label_groups(s.text("data.label_groups"));
  } catch (const ValueError& e) {
    s.fail("data.label_groups", e.what(), e.hint());
  }

  c.strategy = parse_strategy(s.text("training.strategy"));
  c.sync = make_sync_config(s);
  c.ps = make_ps_config(s);
  c.fl = make_fl_config(s);
  c.compression = make_compression_config(s);
  c.batch_per_worker = static_cast<int>(s.integer("training.batch_per_worker"));
  c.epochs = static_cast<int>(s.integer("training.epochs"));
  c.max_steps = s.integer("training.max_steps");
  c.lr = s.real("training.lr");
  c.momentum = s.real("training.momentum");
  c.weight_decay = s.real("training.weight_decay");
  c.nesterov = s.boolean("training.nesterov");
  c.optimizer.name = s.text("training.optimizer");
  c.optimizer.beta1 = s.real("training.beta1");
  c.optimizer.beta2 = s.real("training.beta2");
  c.optimizer.eps = s.real("training.eps");
  c.optimizer.trust_coefficient = s.real("training.trust_coefficient");
  ScheduleConfig& sch = c.schedule;
  sch.base_batch = static_cast<int>(s.integer("training.base_batch"));
  sch.scaling = s.text("training.lr_scaling");
  sch.warmup_epochs = s.real("training.warmup_epochs");
  sch.warmup_steps = s.integer("training.warmup_steps");
  sch.decay = s.text("training.decay");
  sch.decay_every_epochs = s.real("training.decay_every_epochs");
  sch.decay_gamma = s.real("training.decay_gamma");
  sch.min_lr = s.real("training.min_lr");
  PrecisionConfig& p = c.precision;
  p.weights = s.text("precision.weights");
  p.activations = s.text("precision.activations");
  p.gradients = s.text("precision.gradients");
  p.loss_scaling = s.text("precision.loss_scaling");
  p.loss_scale = s.real("precision.loss_scale");
  p.growth_interval = s.integer("precision.growth_interval");
  c.evals_per_epoch = static_cast<int>(s.integer("eval.per_epoch"));
  c.target_accuracy = s.real("eval.target_accuracy");
  c.save_model = s.boolean("output.save_model");

  check_combinations(s, c);
  if (static_cast<int64_t>(c.workers) * c.batch_per_worker > (int64_t{1} << 31))
    s.fail("training.batch_per_worker", "global batch (workers × batch_per_worker) is too large");
  c.scenario_json = s.to_json();
  return c;
}

}  // namespace dtsim::sim
