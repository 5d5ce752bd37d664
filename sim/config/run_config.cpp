#include "sim/config/run_config.hpp"

#include <algorithm>

#include "sim/config/run_checks.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/key_builders.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/text.hpp"
#include "sim/scenario/units.hpp"

namespace dtsim::sim {

namespace {

bool safe_name_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
         ch == '.';
}

}  // namespace

// run.name becomes a folder name (out/<run.name>): one plain file name, never a path. A name the user gave is
// refused when it is not; the default (the scenario file's stem) has its other characters replaced by '_'.
std::string run_name(const Scenario& s) {
  const std::string name = trim(s.text("run.name"));
  const bool given = !s.origin("run.name").file.empty() || s.origin("run.name").command_line;
  bool safe = !name.empty() && name.size() <= 100 && name[0] != '.';
  for (const char ch : name) safe = safe && safe_name_char(ch);
  if (safe) return name;
  if (given)
    s.fail("run.name", "'" + printable(name) + "' is not a plain file name (it names the output folder out/<run.name>)",
           "use letters, digits, '-', '_' and '.', not starting with '.', at most 100 characters");
  std::string cleaned;
  for (const char ch : name.substr(0, 100)) cleaned += safe_name_char(ch) ? ch : '_';
  if (cleaned.empty() || cleaned[0] == '.') cleaned = "run" + cleaned;
  return cleaned;
}

std::vector<const GpuSpec*> gpus_in_use(const RunConfig& c) {
  if (c.layout.groups.empty()) return {&c.gpu};
  std::vector<const GpuSpec*> gpus;
  for (const NodeGroup& g : c.layout.groups) gpus.push_back(&g.gpu);
  return gpus;
}

CollectiveOptions collective_options(const RunConfig& c) {
  double least = 0.0, greatest = 0.0;
  for (const GpuSpec* g : gpus_in_use(c)) {
    if (g->compute_capability <= 0) return c.collectives.options(c.fabric, c.layout, 0.0, 0.0);
    least = least == 0.0 ? g->compute_capability : std::min(least, g->compute_capability);
    greatest = std::max(greatest, g->compute_capability);
  }
  return c.collectives.options(c.fabric, c.layout, least, greatest);
}

bool averages_models_only(const RunConfig& c) {
  return c.strategy == Strategy::Local && c.sync.local_steps > 1 && c.sync.sync_until_step == 0;
}

long long node_count(const RunConfig& c) {
  if (c.layout.groups.empty()) return (c.workers + c.layout.gpus_per_node - 1) / c.layout.gpus_per_node;
  long long nodes = 0;
  for (const NodeGroup& g : c.layout.groups) nodes += g.nodes;
  return nodes;
}

namespace {

// compute.matmul = tiles needs, on every GPU in use, its SMs and the rate large products reach in the math mode
// the products run in.
void check_matmul_model(const Scenario& s, const RunConfig& c) {
  if (c.matmul != MatmulModel::Tiles) return;
  const MathMode math = charged_math(c);
  for (const GpuSpec* g : gpus_in_use(c)) {
    if (g->multiprocessors <= 0)
      s.fail_at_set({"compute.matmul", "gpu.multiprocessors"}, "tiles needs the SM count of " + g->name + ", and gpu.multiprocessors is 0",
                    "set gpu.multiprocessors (add it to the profile with its source), or use compute.matmul = roofline");
    const std::string key = std::string("gpu.achievable_") + to_string(math);
    if (!(g->achievable(math) > 0))
      s.fail_at_set({"compute.matmul", key}, "tiles needs the rate large " + std::string(to_string(math)) +
                        " products reach on " + g->name + ", and " + key + " is 0",
                    "set " + key + " from a kernel benchmark (with its source), or use compute.matmul = roofline");
  }
}

}  // namespace

RunConfig make_run_config(const Scenario& s, ConfigUse use) {
  RunConfig c;
  // [run], [eval] and [output]: this module's own sections.
  c.name = run_name(s);
  c.framework = trim(s.text("framework.name")).empty() ? trim(s.text("framework.profile")) : trim(s.text("framework.name"));
  c.scenario_path = s.path();
  c.seed = static_cast<uint64_t>(s.integer("run.seed"));
  const auto stream_seed = [&](const char* key) {
    return trim(s.text(key)).empty() ? std::optional<uint64_t>() : std::optional<uint64_t>(s.integer(key));
  };
  c.model_seed_set = stream_seed("run.model_seed");
  c.data_seed_set = stream_seed("run.data_seed");
  c.heterogeneity_seed_set = stream_seed("run.heterogeneity_seed");
  c.evals_per_epoch = static_cast<int>(s.integer("eval.per_epoch"));
  c.target_accuracy = s.real("eval.target_accuracy");
  c.stop_on_divergence = s.boolean("eval.stop_on_divergence");
  c.divergence_factor = s.real("eval.divergence_factor");
  c.save_model = s.boolean("output.save_model");
  c.trace = s.boolean("output.trace");
  c.trace_steps = s.integer("output.trace_steps");
  c.links = s.boolean("output.links");

  // Every other section, read once by the module that declares its keys. Some readers need a value of an
  // earlier section (the worker count, the seed), which they are given typed.
  c.workers = worker_count(s);
  c.layout = make_cluster_config(s);
  // Under cluster.groups the [gpu] section is on no node, so it is not read (it may be left without values).
  c.gpu = c.layout.groups.empty() ? make_gpu_spec(s) : c.layout.groups.front().gpu;
  c.fabric = make_fabric_spec(s);
  check_network_price(s, c.fabric, gpus_in_use(c), !c.layout.groups.empty());
  read_network_section(s, c);
  read_numerics_sections(s, c);
  c.qa_model = make_qa_model_config(s);
  c.data = make_data_config(s);
  c.heterogeneity = make_heterogeneity_config(s, c.workers, c.heterogeneity_seed());
  c.collectives = make_collective_config(s);
  c.sync = make_sync_config(s);
  c.ps = make_ps_config(s);
  c.fl = make_fl_config(s, c.workers);
  c.compression = make_compression_config(s, c.seed);
  c.workload = make_workload_config(s);
  check_matmul_model(s, c);
  c.scenario_json = s.to_json();
  c.command_line_sets = s.command_line_sets();

  check_run_config(c, s.origins(), use);
  return c;
}

// ---- keys ------------------------------------------------------------------------------------------------
using namespace key_builders;

static KeySpec optional_seed(const char* name, const char* help) {
  KeySpec k = integer(name, "", between(0, 1e15), help);
  k.optional = true;
  return k;
}

void add_run_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      text("run.name", "", "Run name used in outputs; defaults to the scenario file name without .ini", true),
      integer("run.seed", "1", between(0, 1e15),
              "Seed of every random stream (data order, initialisation, stragglers, sampling) unless one of "
              "run.model_seed, run.data_seed, run.heterogeneity_seed sets that stream; compression's always"),
      optional_seed("run.model_seed", "Seed of the weight initialisation; unset = run.seed"),
      optional_seed("run.data_seed", "Seed of the data order, the partition over workers and synthetic data; unset = run.seed"),
      optional_seed("run.heterogeneity_seed",
                    "Seed of the slow workers chosen by stragglers.slow_fraction, the slowed steps and the federated "
                    "rounds (who is online, sampled, a straggler); unset = run.seed"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

void add_output_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      real("eval.target_accuracy", "0", between(0, 1),
           "Report the simulated time and cost at which test accuracy first reaches this value; 0 = none"),
      integer("eval.per_epoch", "2", between(1, 100000),
              "Test-set evaluations per epoch (plus one before training), spread evenly over its steps and at most one "
              "a step; evaluation costs no simulated time"),
      boolean("eval.stop_on_divergence", "true",
              "End the run at the first divergence (status diverged); false = record it and train on"),
      real("eval.divergence_factor", "100", between(1, 1e12),
           "Divergence: a step's training loss above this many times max(1, the untrained model's test loss, "
           "or the first step's loss without a step-0 evaluation); NaN or "
           "infinite losses always count"),
      boolean("output.save_model", "false", "Write the final parameters to model.bin (float32, little-endian)"),
      boolean("output.trace", "false",
              "Write trace.json, a timeline in Chrome's trace-event format (Perfetto): per worker, each step's "
              "compute, wait for the slowest peer and exchange (sync, local SGD), compute, push and pull (async-ps), "
              "or each round's download, local steps and upload (federated); link and staleness counters"),
      integer("output.trace_steps", "100", between(1, 1e9), "Steps that trace.json records, from the first (keeps long runs' files small)"),
      boolean("output.links", "true",
              "Write links.csv: per link of the platform, the bytes the run's transfers put on it and its mean and "
              "peak utilisation"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

MathMode charged_math(const RunConfig& config) {
  return config.workload.active() ? workload_math(config.workload.precision) : config.math;
}

}  // namespace dtsim::sim
