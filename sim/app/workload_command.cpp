#include "sim/app/workload_command.hpp"

#include <charconv>

#include <boost/program_options.hpp>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>

#include "models/name_table.hpp"
#include "models/workload/catalog.hpp"
#include "models/workload/compute_time.hpp"
#include "models/workload/memory.hpp"
#include "sim/app/flags.hpp"
#include "sim/app/workload_timing.hpp"
#include "sim/config/hardware_config.hpp"
#include "sim/config/ignored_keys.hpp"
#include "sim/config/numerics_setup.hpp"
#include "sim/config/schema.hpp"
#include "sim/config/workload_config.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/scenario/keys.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/text.hpp"


namespace po = boost::program_options;

namespace dtsim::sim {
namespace {

// A CSV cell that reads back as the same double (spreadsheets sum these: %.6g lost bytes in the sums).
std::string exact(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

using models::Workload;

const char* const kHelp =
    "usage: dtsim workload [NAME | FILE.json] [options]\n"
    "\n"
    "Without NAME: the workload catalog, one line per workload. With NAME (a catalog name or a .json file):\n"
    "its parameters, FLOPs and activations, and its memory per GPU for the training setup below, against the\n"
    "memory of a GPU profile, with the changes that would make it fit when it does not.\n"
    "FLOPs count matrix products (2 per multiply-add); memory is in GB (10^9 bytes).\n"
    "\n"
    "  --gpus N            GPUs holding replicas by data parallelism; ZeRO shards over them (default 1)\n"
    "  --zero S            ZeRO stage: 0 none, 1 optimizer state, 2 + gradients, 3 + weights (default 0)\n"
    "  --micro-batch B     samples (images or sequences) per GPU per forward pass (default 1)\n"
    "  --checkpointing     activation checkpointing: keep each block's input, recompute the rest\n"
    "  --precision P       bf16 (default: bf16 weights, gradients and activations, fp32 master weights and\n"
    "                      optimizer state; matrix products at the BF16 tensor peak) | tf32 (fp32 storage,\n"
    "                      products at the TF32 tensor peak) | fp32 (fp32 storage and FP32 peak)\n"
    "  --optimizer O       adam (default: two fp32 moments per weight) | sgd-momentum (one) | sgd (none)\n"
    "  --optimizer-kernels K  fused (default: one pass over gradient, weights and state) | foreach (PyTorch's\n"
    "                      multi-tensor default: one pass per arithmetic step, Adam 8 kernels)\n"
    "  --gpu P             GPU profile: its memory is the budget, its peaks, memory bandwidth and launch\n"
    "                      overhead time one step by a per-layer roofline (gpu.profile; default a100-80gb)\n"
    "  --layers            print the per-layer table (forward order)\n"
    "  --simulate          also simulate --steps synchronous data-parallel steps on a cluster of --gpus GPUs\n"
    "                      (timing only, no numerics): each layer's compute from the roofline at the profile's\n"
    "                      gpu.efficiency, gradients bucketed in backward order and allreduced as DDP does\n"
    "  --steps N           steps to simulate, 2 or more (default 10; the first is not counted in the step time)\n"
    "  --set k=v           with --simulate: a cluster, fabric, gpu, network, collective, stragglers or background\n"
    "                      key, compute.matmul (tiles: products from their shapes, as the tiled line),\n"
    "                      compute.host_dispatch and compute.cuda_graphs (how the host issues kernels),\n"
    "                      sync.bucket_size, sync.overlap, sync.prefetch_units (ZeRO-3 gathers ahead) or\n"
    "                      sync.accumulation_steps (micro-batches a step), e.g. --set cluster.topology=fat-tree;\n"
    "                      run.seed with random stragglers; no [faults] (repeatable)\n"
    "  --format F          table (default) | csv (the catalog's rows, or one workload's per-layer table, which\n"
    "                      takes no setup flag) | json (everything the table shows)\n"
    "\n"
    "The catalog folder is models/workloads/ in the source tree, or $DTSIM_WORKLOAD_DIR.\n";

enum class Format { Table, Csv, Json };
using Precision = WorkloadPrecision;
using Optimizer = WorkloadOptimizer;

const models::NameTable<Format>& formats() {
  static const models::NameTable<Format> t{{Format::Table, "table"}, {Format::Csv, "csv"}, {Format::Json, "json"}};
  return t;
}
const models::NameTable<Precision>& precisions() { return workload_precision_table(); }
const models::NameTable<Optimizer>& optimizers() { return workload_optimizer_table(); }

struct Flags {
  std::string name;
  models::MemorySetup setup;
  std::string gpu_profile = "a100-80gb";
  Precision precision = Precision::Bf16;
  Optimizer optimizer = Optimizer::Adam;
  bool layers = false;
  bool simulate = false;
  int steps = 10;
  std::vector<std::string> sets;  // scenario keys for --simulate, with the flag behind each
  std::vector<std::string> set_flags;
  bool help = false;
  Format format = Format::Table;
};

template <class Enum>
Enum parse_choice(const po::variables_map& vm, const char* flag, const models::NameTable<Enum>& table, Enum fallback) {
  if (!vm.count(flag)) return fallback;
  const std::string text = vm[flag].as<std::string>();
  if (const auto v = table.parse(text)) return *v;
  const std::string near = suggest_among(text, table.names());
  throw InputError("command line", std::string("--") + flag, "unknown value '" + text + "'",
                   near.empty() ? "use " + table.or_list() : "did you mean '" + near + "'?");
}

Flags parse_flags(int argc, char** argv) {
  po::options_description opts;
  opts.add_options()("gpus", po::value<std::string>())("zero", po::value<std::string>())(
      "micro-batch", po::value<std::string>())("checkpointing", po::bool_switch())(
      "precision", po::value<std::string>())("optimizer", po::value<std::string>())("gpu", po::value<std::string>())(
      "optimizer-kernels", po::value<std::string>())(
      "layers", po::bool_switch())("format", po::value<std::string>())("help,h", po::bool_switch())(
      "simulate", po::bool_switch())("steps", po::value<std::string>())(
      "set", po::value<std::vector<std::string>>()->composing());
  const po::variables_map vm = parse_command_flags(argc, argv, opts, "name", "workload");
  Flags f;
  f.help = vm["help"].as<bool>();
  if (vm.count("name")) {
    const auto names = vm["name"].as<std::vector<std::string>>();
    if (names.size() > 1)
      throw InputError("command line", "", "unexpected argument '" + names[1] + "'", "name one workload");
    f.name = names.front();
  }
  f.precision = parse_choice(vm, "precision", precisions(), Precision::Bf16);
  f.optimizer = parse_choice(vm, "optimizer", optimizers(), Optimizer::Adam);
  f.setup = workload_memory_setup(f.precision, f.optimizer,
                                  static_cast<int>(whole_number_flag(vm, "micro-batch", 1, 1, 1 << 20)),
                                  vm["checkpointing"].as<bool>(),
                                  static_cast<int>(whole_number_flag(vm, "gpus", 1, 1, 1 << 24)));
  f.setup.zero_stage = static_cast<int>(whole_number_flag(vm, "zero", 0, 0, 3));
  f.setup.optimizer_kernels =
      parse_choice(vm, "optimizer-kernels", models::optimizer_kernels_table(), models::OptimizerKernels::Fused);
  if (vm.count("gpu")) f.gpu_profile = vm["gpu"].as<std::string>();
  f.layers = vm["layers"].as<bool>();
  f.format = parse_choice(vm, "format", formats(), Format::Table);
  f.simulate = vm["simulate"].as<bool>();
  // The first step is not counted (it has no step before it to overlap with), so one step measures nothing;
  // the same range as workload.steps.
  f.steps = static_cast<int>(whole_number_flag(vm, "steps", 10, 2, 100000));
  if (!f.simulate) {
    for (const char* flag : {"steps", "set"})
      if (vm.count(flag))
        throw InputError("command line", std::string("--") + flag, "applies to a simulation", "add --simulate");
  } else {
    f.sets = {"gpu.profile=" + f.gpu_profile, "cluster.workers=" + std::to_string(f.setup.data_parallel)};
    f.set_flags = {"--gpu", "--gpus"};
    if (vm.count("set"))
      for (const std::string& kv : vm["set"].as<std::vector<std::string>>()) {
        // Two ways to say one thing would disagree: the flags own these keys.
        const std::string key = kv.substr(0, kv.find('='));
        const std::string flag = key == "gpu.profile"                 ? "--gpu"
                                 : key == "cluster.workers"           ? "--gpus"
                                 : key == "sync.zero_stage"           ? "--zero"
                                 : key == "compute.optimizer_kernels" ? "--optimizer-kernels"
                                                                      : "";
        if (!flag.empty()) throw InputError("command line", "--set", key + " is set by " + flag, "use that flag");
        // A framework profile sets the ZeRO stage and optimizer kernels, which this command's flags own, so
        // it would be half applied.
        if (key == "framework.profile" || key == "framework.name")
          throw InputError("command line", "--set",
                           key + " is not read by dtsim workload, whose flags set what a framework profile would",
                           "give the profile's --zero and --optimizer-kernels (and --set sync.bucket_size, sync.overlap), "
                           "or run a workload scenario with [framework] under dtsim run");
        f.sets.push_back(kv);
        f.set_flags.push_back("--set");
      }
  }
  // Where no training setup is read, a flag for one would be ignored: the first such flag is refused.
  const auto refuse_setup_flags = [&vm](std::initializer_list<const char*> switches, const std::string& reason,
                                        const std::string& hint) {
    for (const char* flag : {"gpus", "zero", "micro-batch", "precision", "optimizer", "optimizer-kernels", "gpu", "steps", "set"})
      if (vm.count(flag)) throw InputError("command line", std::string("--") + flag, reason, hint);
    for (const char* flag : switches)
      if (vm[flag].as<bool>()) throw InputError("command line", std::string("--") + flag, reason, hint);
  };
  // One workload's csv is its per-layer table, which no training setup changes.
  if (!f.name.empty() && f.format == Format::Csv)
    refuse_setup_flags({"checkpointing", "simulate"},
                       "has no effect with --format csv (the per-layer table, the same for any training setup)",
                       "use --format json for the setup's memory, step time and simulation");
  // Listing the catalog uses no training setup.
  if (f.name.empty()) refuse_setup_flags({"checkpointing", "layers", "simulate"}, "applies to one workload", "name a workload");
  // ZeRO shards over the data-parallel GPUs: on one there is nothing to shard over (a warning, as a run gives
  // for a key without effect; after the refusals above, which come first).
  if (const std::string why = zero_sharding_without_effect(f.setup.zero_stage, f.setup.data_parallel); !why.empty())
    std::fprintf(stderr, "dtsim: warning: command line: --zero: %s (--gpus 1)\n", why.c_str());
  return f;
}

std::string grouped(std::uint64_t n) {  // 6738415616 -> "6,738,415,616"
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// FLOPs with an SI prefix: "27.8 TFLOP".
std::string flops(double f) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (f >= 1000 && i < 6) {
    f /= 1000;
    ++i;
  }
  return printf_number("%.3g ", f) + prefixes[i] + "FLOP";
}

std::string per_unit(const Workload& w) {
  return w.sample == "sequence" ? "sequence of " + std::to_string(w.tokens_per_sample) + " tokens" : w.sample;
}

// The catalog, one line per workload, with figures for bf16 mixed-precision Adam on one GPU.
int list_catalog(const std::string& dir, Format format) {
  std::vector<Workload> all;
  for (const auto& file : models::catalog_files(dir)) all.push_back(models::load_workload(file));
  const models::MemorySetup adam;  // the defaults: bf16 with fp32 master weights and Adam
  const auto state = [&adam](const Workload& w) {
    return models::state_memory(double(w.parameters()), double(w.trainable()), adam).total();
  };
  if (format == Format::Json) {
    nlohmann::ordered_json doc = nlohmann::ordered_json::array();
    for (const auto& w : all)
      doc.push_back({{"name", w.name}, {"title", w.title}, {"architecture", w.family}, {"parameters", w.parameters()},
                     {"trainable", w.trainable()}, {"sample", w.sample}, {"tokens_per_sample", w.tokens_per_sample},
                     {"forward_flops_per_sample", w.forward_flops()}, {"training_flops_per_sample", w.training_flops()},
                     {"activation_bytes_per_sample_bf16", w.saved_bytes(2)},
                     {"state_bytes_adam_bf16", state(w)}});
    std::printf("%s\n", doc.dump(2).c_str());
    return 0;
  }
  if (format == Format::Csv) {
    std::printf("name,architecture,parameters,trainable,sample,tokens_per_sample,forward_flops_per_sample,"
                "training_flops_per_sample,activation_bytes_per_sample_bf16,state_bytes_adam_bf16\n");
    for (const auto& w : all)
      std::printf("%s,%s,%llu,%llu,%s,%d,%s,%s,%s,%s\n", w.name.c_str(), w.family.c_str(),
                  static_cast<unsigned long long>(w.parameters()), static_cast<unsigned long long>(w.trainable()),
                  w.sample.c_str(), w.tokens_per_sample, exact(w.forward_flops()).c_str(),
                  exact(w.training_flops()).c_str(), exact(w.saved_bytes(2)).c_str(), exact(state(w)).c_str());
    return 0;
  }
  std::printf("# workload catalog: %s\n", dir.c_str());
  std::printf("# training FLOPs per sample (forward + backward); activations kept per sample in bf16; model state\n"
              "# = weights, gradients, fp32 master weights and Adam moments on one GPU (dtsim workload NAME for more)\n");
  std::printf("%-14s %-11s %15s %15s %-24s %13s %12s %12s\n", "name", "family", "parameters", "trained", "sample",
              "training", "activations", "state");
  for (const auto& w : all)
    std::printf("%-14s %-11s %15s %15s %-24s %13s %12s %12s\n", w.name.c_str(), w.family.c_str(),
                grouped(w.parameters()).c_str(), grouped(w.trainable()).c_str(), per_unit(w).c_str(),
                flops(w.training_flops()).c_str(), models::format_gigabytes(w.saved_bytes(2)).c_str(),
                models::format_gigabytes(state(w)).c_str());
  return 0;
}

// The GPU of the report: --gpu's profile with any gpu.* key given by --set (with --simulate), so that the
// memory verdict, the roofline and the simulation all see the same GPU.
GpuSpec gpu_of(const Flags& f) {
  std::vector<std::string> sets = {"gpu.profile=" + f.gpu_profile}, flags = {"--gpu"};
  for (std::size_t i = 0; i < f.sets.size(); ++i)
    if (f.sets[i].rfind("gpu.", 0) == 0 && f.set_flags[i] == "--set") {
      sets.push_back(f.sets[i]);
      flags.push_back("--set");
    }
  return make_gpu_spec(parse_scenario("dtsim workload", "", sets, default_profile_dir(), flags));
}

// The roofline's rates from a GPU profile; a profile without a memory bandwidth cannot time a step.
models::DeviceRates rates_of(const GpuSpec& gpu, Precision precision) {
  if (gpu.memory_bandwidth <= 0)
    throw InputError("command line", "--gpu", "the profile " + gpu.name + " gives no gpu.memory_bandwidth",
                     "add memory_bandwidth (and launch_overhead) to it, with their source");
  models::DeviceRates d;
  d.matmul_flops = gpu.peak(workload_math(precision));
  d.memory_bandwidth = gpu.memory_bandwidth;
  d.launch_overhead = gpu.launch_overhead;
  return d;
}

void print_expected(const Workload& w, const GpuSpec& gpu, const models::StepCompute& expected, double per_second) {
  std::printf("  expected     with products at gpu.efficiency = %g of the peak: %s ms, %s %ss/s%s per GPU\n",
              gpu.efficiency, printf_number("%.4g", expected.total() * 1e3).c_str(), printf_number("%.4g", per_second).c_str(),
              w.sample.c_str(),
              w.sample == "sequence" ? (" = " + printf_number("%.4g", per_second * w.tokens_per_sample) + " tokens/s").c_str()
                                     : "");
}

int show_workload(const Flags& f, const std::string& dir) {
  const Workload w = models::find_workload(f.name, dir);
  const GpuSpec gpu = gpu_of(f);
  const models::DeviceRates rates = rates_of(gpu, f.precision);
  const models::StepCompute step = models::step_compute(w, f.setup, rates);
  const double per_second = f.setup.micro_batch / step.total();
  const double mfu = models::model_flops_utilisation(w, f.setup.micro_batch, step.total(), rates.matmul_flops);
  // The roofline at the peak is a bound. Products that run at the profile's sustained fraction of the peak
  // (gpu.efficiency, measured end to end on large models) give the expected figure beside it.
  models::DeviceRates sustained = rates;
  sustained.matmul_flops *= gpu.efficiency;
  const models::StepCompute expected = models::step_compute(w, f.setup, sustained);
  const double expected_per_second = f.setup.micro_batch / expected.total();
  // With the profile's SMs and achievable rate, the same step with products timed from their shapes (what
  // compute.matmul = tiles charges in a run).
  std::optional<models::StepCompute> tiled;
  const MathMode math = workload_math(f.precision);
  if (gpu.multiprocessors > 0 && gpu.achievable(math) > 0) {
    models::DeviceRates t = rates;
    t.matmul = matmul_unit(gpu, math, MatmulModel::Tiles);
    t.memory_bandwidth = gpu.memory_bandwidth_for(MatmulModel::Tiles);
    tiled = models::step_compute(w, f.setup, t);
  }
  // Simulated before anything is printed, so that a bad key or cluster leaves no partial report.
  std::optional<SimulationSummary> simulated;
  if (f.simulate) simulated = summarize_simulation(w, f.setup, f.precision, rates, f.sets, f.set_flags, f.steps);
  const models::MemoryBreakdown m = models::memory_per_gpu(w, f.setup);
  const bool fits = m.total() <= gpu.memory;
  const auto ways = models::ways_to_fit(w, f.setup, gpu.memory);
  const double tokens = w.tokens_per_sample;
  const double recompute = f.setup.checkpointing ? w.recompute_flops() : 0;

  if (f.format == Format::Csv || (f.format == Format::Table && f.layers)) {
    const bool csv = f.format == Format::Csv;
    if (!csv) {
      std::printf("# %s: per layer, forward order; FLOPs, traffic (activation elements read and written, forward and\n"
                  "# backward) and what the layer keeps for the backward pass (bf16, MB = 10^6 bytes)\n"
                  "# per %s; a trained layer's gradient is ready in the reverse order\n",
                  w.name.c_str(), per_unit(w).c_str());
      std::printf("%-30s %-10s %14s %14s %12s %12s %14s %12s\n", "layer", "kind", "parameters", "trained",
                  "forward", "backward", "traffic", "kept");
    } else {
      std::printf("layer,kind,block,parameters,trainable,forward_flops,backward_flops,forward_traffic_elements,"
                  "backward_traffic_elements,saved_bytes_bf16,forward_kernels,backward_kernels\n");
    }
    for (const auto& l : w.layers) {
      if (csv)
        std::printf("%s,%s,%d,%llu,%llu,%s,%s,%s,%s,%s,%d,%d\n", l.name.c_str(), l.kind.c_str(), l.block,
                    static_cast<unsigned long long>(l.parameters), static_cast<unsigned long long>(l.trainable),
                    exact(l.forward_flops).c_str(), exact(l.backward_flops).c_str(), exact(l.forward_traffic).c_str(),
                    exact(l.backward_traffic).c_str(), exact(l.saved_bytes(2)).c_str(), l.forward_kernels,
                    l.backward_kernels);
      else
        std::printf("%-30s %-10s %14s %14s %12s %12s %14s %12s\n", l.name.c_str(), l.kind.c_str(),
                    grouped(l.parameters).c_str(), grouped(l.trainable).c_str(), flops(l.forward_flops).c_str(),
                    flops(l.backward_flops).c_str(), printf_number("%.4g", l.forward_traffic + l.backward_traffic).c_str(),
                    printf_number("%.1f MB", l.saved_bytes(2) / 1e6).c_str());
    }
    if (csv) return 0;
    std::printf("\n");
  }
  if (f.format == Format::Json) {
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    if (f.layers)
      for (const auto& l : w.layers)
        layers.push_back({{"name", l.name}, {"kind", l.kind}, {"block", l.block}, {"parameters", l.parameters},
                          {"trainable", l.trainable}, {"forward_flops", l.forward_flops},
                          {"backward_flops", l.backward_flops}, {"forward_traffic_elements", l.forward_traffic},
                          {"backward_traffic_elements", l.backward_traffic}, {"saved_bytes_bf16", l.saved_bytes(2)}});
    nlohmann::ordered_json doc = {
        {"name", w.name}, {"title", w.title}, {"architecture", w.family}, {"sources", w.sources},
        {"parameters", w.parameters()}, {"trainable", w.trainable()},
        {"published_parameters", {{"value", w.published_parameters.value}, {"source", w.published_parameters.source}}},
        {"sample", w.sample}, {"tokens_per_sample", w.tokens_per_sample},
        {"forward_flops_per_sample", w.forward_flops()}, {"backward_flops_per_sample", w.backward_flops()},
        {"recompute_flops_per_sample", recompute},
        {"setup", {{"gpus", f.setup.data_parallel}, {"zero_stage", f.setup.zero_stage},
                   {"micro_batch", f.setup.micro_batch}, {"checkpointing", f.setup.checkpointing},
                   {"precision", precisions().name(f.precision)}, {"optimizer", optimizers().name(f.optimizer)},
                   {"optimizer_kernels", models::optimizer_kernels_table().name(f.setup.optimizer_kernels)}}},
        {"memory_per_gpu_bytes", {{"weights", m.weights}, {"master_weights", m.master_weights},
                                  {"gradients", m.gradients}, {"optimizer", m.optimizer},
                                  {"activations", m.activations}, {"total", m.total()}}},
        {"gpu", {{"name", gpu.name}, {"memory_bytes", gpu.memory}, {"price_region", gpu.price_region},
                 {"price_currency", gpu.price_currency}, {"matmul_flops", rates.matmul_flops},
                 {"memory_bandwidth", rates.memory_bandwidth}, {"launch_overhead_s", rates.launch_overhead}}},
        {"fits", fits}, {"ways_to_fit", ways},
        {"compute_per_micro_batch_s", {{"forward", step.forward}, {"backward", step.backward},
                                       {"recompute", step.recompute}, {"optimizer", step.optimizer},
                                       {"total", step.total()}, {"compute_bound", step.compute_bound},
                                       {"memory_bound", step.memory_bound}, {"launches", step.launches},
                                       {"kernels", step.kernels}}},
        {"samples_per_second", per_second}, {"tokens_per_second", per_second * w.tokens_per_sample},
        {"model_flops_utilisation", mfu},
        {"at_gpu_efficiency", {{"efficiency", gpu.efficiency}, {"step_s", expected.total()},
                               {"samples_per_second", expected_per_second},
                               {"tokens_per_second", expected_per_second * w.tokens_per_sample},
                               {"model_flops_utilisation",
                                models::model_flops_utilisation(w, f.setup.micro_batch, expected.total(),
                                                                rates.matmul_flops)}}}};
    if (tiled) {
      doc["tiled_products"] = {{"multiprocessors", gpu.multiprocessors},
                               {"tile", std::to_string(gpu.matmul_tile_m) + "x" + std::to_string(gpu.matmul_tile_n)},
                               {"achievable_flops", gpu.achievable(math)},
                               {"memory_traffic_bandwidth", gpu.memory_bandwidth_for(MatmulModel::Tiles)},
                               {"step_s", tiled->total()},
                               {"samples_per_second", f.setup.micro_batch / tiled->total()},
                               {"model_flops_utilisation",
                                models::model_flops_utilisation(w, f.setup.micro_batch, tiled->total(), rates.matmul_flops)}};
      if (w.has_fused_attention())
        doc["tiled_products"]["attention_table"] =
            attention_table_applies(gpu, math) ? nlohmann::json(gpu.attention_table_file) : nlohmann::json(nullptr);
    }
    if (f.layers) doc["layers"] = layers;
    if (simulated) doc["simulation"] = simulation_json(*simulated, f.steps);
    std::printf("%s\n", doc.dump(2).c_str());
    return 0;
  }
  std::printf("%s: %s\n", w.name.c_str(), w.title.c_str());
  std::printf("  parameters   %s, of which trained %s\n", grouped(w.parameters()).c_str(), grouped(w.trainable()).c_str());
  if (w.published_parameters.value > 0)
    std::printf("  published    %s (%+.2f %%): %s\n", printf_number("%.6g", w.published_parameters.value).c_str(),
                100 * (double(w.parameters()) / w.published_parameters.value - 1), w.published_parameters.source.c_str());
  std::printf("  per %s: forward %s, backward %s%s\n", per_unit(w).c_str(), flops(w.forward_flops()).c_str(),
              flops(w.backward_flops()).c_str(),
              recompute > 0 ? (", recomputed " + flops(recompute)).c_str() : "");
  if (w.sample == "sequence")
    std::printf("  per token: training %s (6 x parameters = %s)\n", flops((w.training_flops() + recompute) / tokens).c_str(),
                flops(6.0 * double(w.parameters())).c_str());
  std::printf("  setup        %d GPU%s, ZeRO stage %d, micro-batch %.15g, %s, %s, %s (%s kernels)\n", f.setup.data_parallel,
              f.setup.data_parallel == 1 ? "" : "s", f.setup.zero_stage, f.setup.micro_batch,
              f.setup.checkpointing ? "activation checkpointing" : "no activation checkpointing",
              f.precision == Precision::Bf16   ? "bf16 with fp32 master weights"
              : f.precision == Precision::Tf32 ? "fp32 with TF32 products"
                                               : "fp32",
              optimizers().name(f.optimizer), models::optimizer_kernels_table().name(f.setup.optimizer_kernels));
  std::printf("  memory/GPU   weights %s, master weights %s, gradients %s, optimizer %s, activations %s: %s\n",
              models::format_gigabytes(m.weights).c_str(), models::format_gigabytes(m.master_weights).c_str(),
              models::format_gigabytes(m.gradients).c_str(), models::format_gigabytes(m.optimizer).c_str(),
              models::format_gigabytes(m.activations).c_str(), models::format_gigabytes(m.total()).c_str());
  std::printf("  %s (%s): %s\n", gpu.name.c_str(), models::format_gigabytes(gpu.memory).c_str(),
              fits ? "fits" : "does not fit");
  for (const auto& way : ways) std::printf("    would fit with %s\n", way.c_str());
  if (!fits && ways.empty()) std::printf("    nothing dtsim knows of makes it fit\n");
  std::printf("  bound        one micro-batch on one %s by the per-layer roofline (%s matrix peak, %s, %s per launch):\n",
              gpu.name.c_str(), printf_number("%.4g TFLOP/s", rates.matmul_flops / 1e12).c_str(),
              printf_number("%.4g GB/s", rates.memory_bandwidth / 1e9).c_str(), printf_number("%.3g us", rates.launch_overhead * 1e6).c_str());
  std::printf("               forward %s ms, backward %s ms, recompute %s ms, optimizer %s ms: %s ms\n",
              printf_number("%.4g", step.forward * 1e3).c_str(), printf_number("%.4g", step.backward * 1e3).c_str(),
              printf_number("%.4g", step.recompute * 1e3).c_str(), printf_number("%.4g", step.optimizer * 1e3).c_str(),
              printf_number("%.4g", step.total() * 1e3).c_str());
  std::printf("               %s ms compute-bound, %s ms memory-bound, %d kernels (%s ms of launches)\n",
              printf_number("%.4g", step.compute_bound * 1e3).c_str(), printf_number("%.4g", step.memory_bound * 1e3).c_str(),
              step.kernels, printf_number("%.4g", step.launches * 1e3).c_str());
  std::printf("               %s %ss/s%s per GPU, model FLOPs utilisation %s %%\n",
              printf_number("%.4g", per_second).c_str(), w.sample.c_str(),
              w.sample == "sequence" ? (" = " + printf_number("%.4g", per_second * w.tokens_per_sample) + " tokens/s").c_str() : "",
              printf_number("%.1f", 100 * mfu).c_str());
  print_expected(w, gpu, expected, expected_per_second);
  if (tiled) {
    const double tiled_per_second = f.setup.micro_batch / tiled->total();
    std::printf("  tiled        with products timed from their shapes (compute.matmul = tiles: %d SMs, %dx%d tiles, "
                "%s, memory traffic at %s): %s ms, %s %ss/s per GPU, model FLOPs utilisation %s %%\n",
                gpu.multiprocessors, gpu.matmul_tile_m, gpu.matmul_tile_n,
                printf_number("%.4g TFLOP/s", gpu.achievable(math) / 1e12).c_str(),
                printf_number("%.4g GB/s", gpu.memory_bandwidth_for(MatmulModel::Tiles) / 1e9).c_str(), printf_number("%.4g", tiled->total() * 1e3).c_str(),
                printf_number("%.4g", tiled_per_second).c_str(), w.sample.c_str(),
                printf_number("%.1f", 100 * models::model_flops_utilisation(w, f.setup.micro_batch, tiled->total(), rates.matmul_flops)).c_str());
    if (w.has_fused_attention())
      std::printf("               FlashAttention %s\n",
                  attention_table_applies(gpu, math)
                      ? ("from the measured table " + gpu.attention_table_file).c_str()
                      : "at the rate above (no gpu.attention_table for this GPU and data type)");
  }
  if (simulated) std::fputs(simulation_text(w, *simulated, f.steps, fits).c_str(), stdout);
  return 0;
}

}  // namespace


int command_workload(int argc, char** argv) {
  const Flags f = parse_flags(argc, argv);
  if (f.help) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  try {
    if (f.name.empty()) return list_catalog(default_workload_dir(), f.format);
    return show_workload(f, default_workload_dir());
  } catch (const models::WorkloadFileError& e) {
    throw InputError("", "", e.what());
  }
}

}  // namespace dtsim::sim
