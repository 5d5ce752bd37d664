#include "sim/app/collective_command.hpp"

#include <boost/program_options.hpp>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "models/name_table.hpp"
#include "sim/app/flags.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/config/collective_algorithms.hpp"
#include "sim/config/ignored_keys.hpp"
#include "sim/config/run_config.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/world/build_platform.hpp"
#include "sim/scenario/keys.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/text.hpp"
#include "sim/scenario/units.hpp"

namespace po = boost::program_options;

namespace dtsim::sim {

namespace {

const char* const kHelp =
    "usage: dtsim collective [options]\n"
    "\n"
    "Simulates one collective at doubling sizes and prints a table in the layout of nccl-tests:\n"
    "size (B), count (float elements), type, time (us), algbw = size/time and busbw = algbw x factor (GB/s,\n"
    "10^9 B/s; factor 2(N-1)/N for allreduce, (N-1)/N for reduce_scatter, all_gather and alltoall, 1 for\n"
    "broadcast and reduce), the wall-clock seconds the size took to simulate, the alpha-beta prediction (us),\n"
    "NCCL's own prediction for the variant (its tuning model: nccl(us), '-' where it has none: another\n"
    "algorithm, all-to-all, no protocol), and the variant that ran (the algorithm, and the protocol with\n"
    "collective.protocol set, e.g. ring/ll128).\n"
    "\n"
    "  --profile P         fabric profile (fabric.profile; default ib-hdr-200)\n"
    "  --topology T        cluster.topology (default star)\n"
    "  --ranks N           cluster.workers (default 8)\n"
    "  --algorithm A       ring | tree | halving-doubling | hierarchical | direct | auto (default ring; auto\n"
    "                      = NCCL's choice per size, ring or tree for allreduce)\n"
    "  --tuner T           nccl | fastest: who makes auto's choices (collective.tuner; default nccl = NCCL's\n"
    "                      tuning model, fastest = the variant dtsim predicts fastest)\n"
    "  --gpu G             GPU profile (gpu.profile; default a100-40gb): its compute capability picks the\n"
    "                      tables of NCCL's tuner\n"
    "  --sizes MIN:MAX     sizes doubling from MIN up to MAX (default 8B:128MiB; GB = 10^9 B, GiB = 2^30 B); or a\n"
    "                      comma-separated list of sizes and ranges, run in that order, e.g. 8B,64KiB,1MiB:1GiB\n"
    "  --op OP             allreduce | reduce_scatter | all_gather | broadcast | reduce | alltoall (default\n"
    "                      allreduce; alltoall runs the direct algorithm)\n"
    "  --fidelity F        auto | stepwise | aggregated | analytic (default auto)\n"
    "  --protocol P        none | ll | ll128 | simple | auto (collective.protocol; default none)\n"
    "  --gpus-per-node G   GPUs per node (cluster.gpus_per_node, for topologies with multi-GPU nodes)\n"
    "  --warmup W          untimed collectives before each size (default 0; the first call of a size builds its\n"
    "                      plan and mailboxes, which a warm-up keeps out of wall(s))\n"
    "  --iters N           timed collectives per size; time and wall are their means (default 1)\n"
    "  --format F          table (default, nccl-tests' layout with # comment lines) | csv (a header line, then one\n"
    "                      line per size) | json (one document: the collective, the platform and the rows)\n"
    "  --set k=v           any scenario key, e.g. --set fabric.bandwidth=300GB/s (repeatable)\n"
    "\n"
    "All sizes run one after another in one simulation; each starts when every rank finished the previous one.\n";

enum class Format { Table, Csv, Json };

struct Flags {
  std::vector<std::string> sets;       // the flags as scenario keys, then the user's --set
  std::vector<std::string> set_flags;  // the flag behind each of `sets`, for messages
  Format format = Format::Table;
  CollectiveKind op = CollectiveKind::Allreduce;
  std::vector<unsigned long long> sizes;
  int warmup = 0;
  int iters = 1;
  bool help = false;
};

// The flags that stand for scenario keys.
const std::vector<std::pair<const char*, const char*>>& key_flags() {
  static const std::vector<std::pair<const char*, const char*>> flags = {
      {"profile", "fabric.profile"},          {"topology", "cluster.topology"},     {"ranks", "cluster.workers"},
      {"algorithm", "collective.algorithm"},  {"fidelity", "collective.fidelity"},  {"protocol", "collective.protocol"},
      {"gpus-per-node", "cluster.gpus_per_node"}, {"gpu", "gpu.profile"},         {"tuner", "collective.tuner"}};
  return flags;
}

// What the user types here: a message's advice to change one of those keys names its flag instead ("make
// cluster.workers a multiple of 2" is "make --ranks a multiple of 2" in this command); a value stated as
// "key = value" keeps the key.
std::string in_flag_terms(std::string text) {
  for (const auto& [flag, key] : key_flags()) {
    const std::string k = key;
    for (size_t at = text.find(k); at != std::string::npos; at = text.find(k, at)) {
      const size_t end = at + k.size();
      const bool word = end == text.size() || !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_');
      // "collective.algorithm = ring" states a value, which reads best as the key it is.
      const bool stated_value = text.compare(end, 3, " = ") == 0;
      if (!word || stated_value) {
        at = end;
        continue;
      }
      const std::string spelled = std::string("--") + flag;
      text.replace(at, k.size(), spelled);
      at += spelled.size();
    }
  }
  return text;
}

// An error of the run's keys, its advice in flag terms; the "<where>: <key>: " it starts with stays as it is.
[[noreturn]] void rethrow_in_flag_terms(const InputError& e) {
  const std::string text = e.what();
  const std::string label = e.key().empty() ? std::string() : e.key() + ": ";
  const size_t at = label.empty() ? std::string::npos : text.find(label);
  const size_t from = at == std::string::npos ? 0 : at + label.size();
  throw InputError::rendered(text.substr(0, from) + in_flag_terms(text.substr(from)), e.key());
}

// A flag that stands for a scenario key: checked against the key's schema so the error names the flag.
void add_key_flag(Flags& f, const po::variables_map& vm, const char* flag, const std::string& key) {
  if (!vm.count(flag)) return;
  const std::string value = vm[flag].as<std::string>();
  const KeySpec* spec = find_key(key);
  if (!spec) throw std::logic_error(std::string("--") + flag + " stands for " + key + ", which is no scenario key");
  try {
    validate_value(*spec, value);
  } catch (const ValueError& e) {
    throw InputError("command line", std::string("--") + flag, e.what(), e.hint());
  }
  f.sets.push_back(key + "=" + value);
  f.set_flags.push_back(std::string("--") + flag);
}

Flags parse_flags(int argc, char** argv) {
  po::options_description opts;
  opts.add_options()("profile", po::value<std::string>())("topology", po::value<std::string>())(
      "ranks", po::value<std::string>())("algorithm", po::value<std::string>())("sizes", po::value<std::string>())(
      "op", po::value<std::string>())("fidelity", po::value<std::string>())("protocol", po::value<std::string>())("gpus-per-node", po::value<std::string>())(
      "gpu", po::value<std::string>())("tuner", po::value<std::string>())(
      "set", po::value<std::vector<std::string>>()->composing())("help,h", po::bool_switch())(
      "warmup", po::value<std::string>())("iters", po::value<std::string>())("format", po::value<std::string>());
  const po::variables_map vm = parse_command_flags(argc, argv, opts, "extra", "collective");  // argv[0] is "collective"
  if (vm.count("extra"))
    throw InputError("command line", "", "unexpected argument '" + vm["extra"].as<std::vector<std::string>>().front() + "'",
                     "run 'dtsim collective --help'");
  Flags f;
  f.help = vm["help"].as<bool>();
  for (const auto& [flag, key] : key_flags()) add_key_flag(f, vm, flag, key);
  if (vm.count("set"))
    for (const std::string& s : vm["set"].as<std::vector<std::string>>()) {
      f.sets.push_back(s);
      f.set_flags.push_back("--set");
    }
  if (vm.count("format")) {
    const std::string format = vm["format"].as<std::string>();
    if (format == "table") f.format = Format::Table;
    else if (format == "csv") f.format = Format::Csv;
    else if (format == "json") f.format = Format::Json;
    else throw InputError("command line", "--format", "unknown format '" + format + "'", "use table, csv or json");
  }
  if (vm.count("op") && !parse_collective_kind(vm["op"].as<std::string>(), f.op)) {
    const std::string near = suggest_among(vm["op"].as<std::string>(), collective_kind_names());
    throw InputError("command line", "--op", "unknown collective '" + vm["op"].as<std::string>() + "'",
                     near.empty() ? "use " + collective_kind_table().or_list()
                                  : "did you mean '" + near + "'?");
  }
  // An operation that the default ring does not implement runs the one flat algorithm that does (alltoall:
  // direct; `auto` would choose it too), unless --algorithm or --set collective.algorithm says otherwise.
  const bool algorithm_set = std::any_of(f.sets.begin(), f.sets.end(), [](const std::string& kv) {
    return trim(kv.substr(0, kv.find('='))) == "collective.algorithm";
  });
  if (!vm.count("algorithm") && !algorithm_set && !algorithm_descriptor(Algorithm::Ring).implements(f.op)) {
    std::vector<Algorithm> flat;
    for (const Algorithm a : algorithms_implementing(f.op))
      if (algorithm_descriptor(a).flat) flat.push_back(a);
    if (flat.size() == 1) {
      f.sets.insert(f.sets.begin(), std::string("collective.algorithm=") + to_string(flat.front()));
      f.set_flags.insert(f.set_flags.begin(), "--op");
    }
  }
  f.sizes = parse_size_range(vm.count("sizes") ? vm["sizes"].as<std::string>() : "8B:128MiB");
  f.warmup = static_cast<int>(whole_number_flag(vm, "warmup", 0, 0, 1000000));
  f.iters = static_cast<int>(whole_number_flag(vm, "iters", 1, 1, 1000000));
  return f;
}

std::string efficiency_text(double e) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", e);
  return buf;
}

// One size's result.
struct Row {
  uint64_t size = 0;
  double start = 0.0, end = 0.0, wall = 0.0;
  double model = 0.0;  // the alpha-beta prediction (s)
  std::string variant;  // algorithm and protocol that ran, e.g. "ring/ll128"
  std::optional<double> nccl;  // NCCL's own prediction for that variant (s), where it has one

  double seconds() const { return end - start; }
  double algbw() const { return seconds() > 0.0 ? static_cast<double>(size) / seconds() / 1e9 : 0.0; }
};

// What every format says about the run before its rows.
struct Header {
  std::string collective;  // Collective::describe()
  std::string platform;    // the platform and fabric line
  CollectiveKind op = CollectiveKind::Allreduce;
  int ranks = 0;
  double factor = 1.0;  // busbw = algbw x factor
  int warmup = 0, iters = 1;
  nlohmann::json settings;  // the same, as fields (JSON only): what was asked for and the platform's values
  bool no_protocol = false;  // collective.protocol = none: the table notes that small sizes are lower bounds
};

// The settings a script needs without parsing the header's sentences: the algorithm, fidelity, protocol and
// channels asked for (the rows' `variant` says what ran at each size), the cluster's shape and the fabric.
nlohmann::json settings_json(const RunConfig& c) {
  const CollectiveConfig& k = c.collectives;
  // The GPUs in use (each group's under cluster.groups) and the compute capability NCCL's tuner reads: the least.
  nlohmann::json gpu_names = nlohmann::json::array();
  for (const GpuSpec* g : gpus_in_use(c)) gpu_names.push_back(g->name);
  nlohmann::json fabric = {{"name", c.fabric.name},
                           {"bandwidth_Bps", c.fabric.bandwidth},
                           {"link_latency_s", c.fabric.link_latency},
                           {"switch_latency_s", c.fabric.switch_latency},
                           {"efficiency", c.fabric.efficiency}};
  return {{"algorithm", to_string(k.algorithm)},
          {"inter_node", to_string(k.inter_node)},
          {"fidelity", to_string(k.fidelity)},
          {"protocol", to_string(k.protocol)},
          {"tuner", to_string(k.tuner)},
          {"gpus", gpu_names},
          {"compute_capability", collective_options(c).compute_capability / 10.0},
          {"channels", k.channels == 0 ? nlohmann::json("auto") : nlohmann::json(k.channels)},
          {"topology", to_string(c.layout.topology)},
          {"gpus_per_node", c.layout.gpus_per_node},
          {"nics_per_node", c.layout.nics_per_node},
          {"intra_node_fabric", c.layout.has_intra_node_fabric ? nlohmann::json(c.layout.intra_node_fabric.name)
                                                               : nlohmann::json(nullptr)},
          {"fabric", fabric}};
}

void print_header(Format format, const Header& h) {
  switch (format) {
    case Format::Table:
      std::printf("# dtsim collective: %s\n# platform: %s\n", h.collective.c_str(), h.platform.c_str());
      std::printf("# busbw = algbw x %.6g; sizes run one after another in one simulation, %d untimed + %d timed per size\n",
                  h.factor, h.warmup, h.iters);
      // Without the protocol model a call pays the fabric's latency only: small sizes are lower bounds.
      if (h.no_protocol)
        std::printf("# protocol none: NCCL's latencies per call and per hop are not charged, so small sizes read as "
                    "lower bounds (--protocol auto adds them)\n");
      std::printf("#\n");
      std::printf("#%12s %13s %7s %12s %12s %12s %10s %12s %12s  %s\n", "size", "count", "type", "time(us)",
                  "algbw(GB/s)", "busbw(GB/s)", "wall(s)", "model(us)", "nccl(us)", "variant");
      break;
    case Format::Csv:
      std::printf("size_bytes,count,type,time_us,algbw_gbps,busbw_gbps,wall_s,model_us,variant,nccl_us\n");
      break;
    case Format::Json: break;  // one document at the end
  }
  std::fflush(stdout);
}

void print_row(Format format, const Row& r, double factor) {
  const unsigned long long size = r.size;
  switch (format) {
    case Format::Table: {
      char nccl[32] = "-";
      if (r.nccl) std::snprintf(nccl, sizeof nccl, "%.2f", *r.nccl * 1e6);
      std::printf("%13llu %13llu %7s %12.2f %12.3f %12.3f %10.4f %12.2f %12s  %s\n", size, size / 4, "float",
                  r.seconds() * 1e6, r.algbw(), r.algbw() * factor, r.wall, r.model * 1e6, nccl, r.variant.c_str());
      break;
    }
    case Format::Csv: {
      char nccl[32] = "";
      if (r.nccl) std::snprintf(nccl, sizeof nccl, "%.9g", *r.nccl * 1e6);
      std::printf("%llu,%llu,float,%.9g,%.9g,%.9g,%.6g,%.9g,%s,%s\n", size, size / 4, r.seconds() * 1e6, r.algbw(),
                  r.algbw() * factor, r.wall, r.model * 1e6, r.variant.c_str(), nccl);
      break;
    }
    case Format::Json: return;
  }
  std::fflush(stdout);
}

void print_json(const Header& h, const std::vector<Row>& rows) {
  nlohmann::json doc;
  doc["collective"] = h.collective;
  doc["platform"] = h.platform;
  doc["op"] = to_string(h.op);
  doc["ranks"] = h.ranks;
  doc["busbw_factor"] = h.factor;
  doc["settings"] = h.settings;
  doc["warmup"] = h.warmup;
  doc["iters"] = h.iters;
  nlohmann::json list = nlohmann::json::array();
  for (const Row& r : rows)
    list.push_back({{"size_bytes", r.size},
                    {"count", r.size / 4},
                    {"type", "float"},
                    {"time_us", r.seconds() * 1e6},
                    {"algbw_gbps", r.algbw()},
                    {"busbw_gbps", r.algbw() * h.factor},
                    {"wall_s", r.wall},
                    {"model_us", r.model * 1e6},
                    {"variant", r.variant},
                    {"nccl_us", r.nccl ? nlohmann::json(*r.nccl * 1e6) : nlohmann::json(nullptr)}});
  doc["rows"] = std::move(list);
  std::printf("%s\n", doc.dump(2).c_str());
}

}  // namespace

std::vector<unsigned long long> parse_one_range(const std::string& text) {
  const size_t colon = text.find(':');
  const auto parse = [&](const std::string& part) {
    try {
      return static_cast<unsigned long long>(parse_byte_count(part, 1, 1000000000000000ull));  // 1 B to 1 PB
    } catch (const ValueError& e) {
      throw InputError("command line", "--sizes", e.what(), "write e.g. --sizes 8B:1GiB");
    }
  };
  if (colon != std::string::npos && text.find(':', colon + 1) != std::string::npos)
    throw InputError("command line", "--sizes", "'" + text + "' has more than one ':'",
                     "write MIN:MAX (the sizes double from MIN), e.g. --sizes 8B:1GiB");
  const unsigned long long lo = parse(text.substr(0, colon));
  const unsigned long long hi = colon == std::string::npos ? lo : parse(text.substr(colon + 1));
  if (hi < lo) throw InputError("command line", "--sizes", "'" + text + "' ends below its start", "write MIN:MAX");
  // The rows count float elements, as nccl-tests' do: a size that is not a whole number of them has no count.
  // (The sizes double from MIN, so MIN decides.)
  if (lo % 4 != 0) {
    // The hint's start: the multiple of 4 below the given one (at least 4), which the given end still reaches.
    const unsigned long long start = std::max<unsigned long long>(4, lo / 4 * 4);
    throw InputError("command line", "--sizes", "'" + text + "' starts at " + std::to_string(lo) +
                                                     " B, not a whole number of 4-byte floats",
                     colon == std::string::npos || start > hi
                         ? "use a multiple of 4 B, e.g. --sizes " + std::to_string(start) + "B"
                         : "start at a multiple of 4 B, e.g. --sizes " + std::to_string(start) + "B:" + text.substr(colon + 1));
  }
  std::vector<unsigned long long> sizes;
  for (unsigned long long s = lo; s <= hi; s *= 2) sizes.push_back(s);
  return sizes;
}

// --sizes: one item or a comma-separated list, each a size or a MIN:MAX range of doubling sizes, run in the
// order given; a size listed twice is refused (its rows would repeat).
std::vector<unsigned long long> parse_size_range(const std::string& text) {
  std::vector<unsigned long long> sizes;
  size_t at = 0;
  while (true) {
    const size_t comma = text.find(',', at);
    const std::string item = trim(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (item.empty())
      throw InputError("command line", "--sizes", "'" + text + "' has an empty item",
                       "separate sizes or ranges with single commas, e.g. --sizes 8B,64KiB,1MiB:1GiB");
    for (const unsigned long long s : parse_one_range(item)) {
      if (std::find(sizes.begin(), sizes.end(), s) != sizes.end())
        throw InputError("command line", "--sizes", "'" + text + "' gives " + std::to_string(s) + " B twice",
                         "list each size once");
      sizes.push_back(s);
    }
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return sizes;
}

int command_collective(int argc, char** argv) {
  const Flags flags = parse_flags(argc, argv);
  if (flags.help) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  const Scenario scenario = parse_scenario("dtsim collective", "", flags.sets, default_profile_dir(), flags.set_flags);
  const RunConfig cfg = [&] {
    try {
      return make_run_config(scenario, ConfigUse::CollectiveCommand);
    } catch (const InputError& e) {
      rethrow_in_flag_terms(e);
    }
  }();
  // Checked before the platform is built, so that the error names the flag.
  if (!algorithm_descriptor(cfg.collectives.algorithm).implements(flags.op)) {
    std::vector<std::string> able;
    for (const Algorithm a : algorithms_implementing(flags.op)) able.emplace_back(to_string(a));
    throw InputError("command line", "--algorithm",
                     std::string("'") + to_string(cfg.collectives.algorithm) + "' does not implement " + to_string(flags.op),
                     "use " + models::join_names(able) + " for " + to_string(flags.op));
  }

  // One rank exchanges nothing: its time would print as 0 and its bandwidth as 0 GB/s, neither measured.
  if (cfg.workers < 2)
    throw InputError("command line", scenario.origin("cluster.workers").command_line ? "--ranks" : "cluster.workers",
                     "a collective needs at least 2 ranks", "give --ranks 2 or more");
  const PlatformSpec spec = platform_spec(cfg);
  auto engine = create_engine(network_settings(spec));
  const Platform platform = build_platform(*engine, spec);
  std::unique_ptr<Collective> collective;
  try {
    collective = make_collective(flags.op, cfg.collectives.algorithm, cfg.collectives.fidelity, platform, "collective",
                                 collective_options(cfg));
  } catch (const CollectiveError& e) {
    throw InputError("collective", collective_key_of(e.cause()), e.reason(), e.hint());
  }
  // The flags are keys, so a flag or --set without effect here gets the same warning as in a run; a key of
  // any other section (training, data, a strategy's, the GPU's compute) has none at all when one collective
  // is timed. Of the GPU's keys, NCCL's tuner reads the compute capability.
  static const std::vector<std::string> kSectionsRead = {"cluster", "fabric", "network", "collective"};
  static const std::vector<std::string> kGpuKeysRead = {"gpu.profile", "gpu.compute_capability"};
  // NCCL predicts the variants it has (ring, its tree) when they run a protocol.
  const bool nccl_column =
      cfg.collectives.protocol != Protocol::None && nccl_tuner_applies(flags.op, cfg.collectives.algorithm);
  std::vector<std::string> bracketed;
  for (const std::string& s : kSectionsRead) bracketed.push_back("[" + s + "]");
  const std::string elsewhere =
      "has no effect in dtsim collective, which reads only the " + models::join_names(bracketed, ", ", " and ") +
      " keys and the GPU's profile and compute capability";
  for (const KeySpec& spec : all_keys()) {
    const Origin& where = scenario.origin(spec.name);
    if (!where.command_line) continue;
    const std::string section = spec.name.substr(0, spec.name.find('.'));
    // The GPU's profile is read for its compute capability alone, which shapes the nccl(us) column wherever
    // a variant NCCL predicts runs, and otherwise acts through NCCL's tuner's choices.
    const bool gpu_key = std::find(kGpuKeysRead.begin(), kGpuKeysRead.end(), spec.name) != kGpuKeysRead.end();
    if (gpu_key && nccl_column) continue;
    const bool read_here =
        gpu_key || std::find(kSectionsRead.begin(), kSectionsRead.end(), section) != kSectionsRead.end();
    const std::string asked = gpu_key ? "gpu.compute_capability" : spec.name;
    const std::string why = read_here ? why_ignored_by_collective(asked, cfg, flags.op) : elsewhere;
    if (!why.empty())
      std::fprintf(stderr, "dtsim: warning: %s: %s: %s\n", where.describe().c_str(), spec.name.c_str(),
                   in_flag_terms(why).c_str());
  }

  const int n = platform.num_workers();
  Header header;
  header.collective = collective->describe();
  header.platform = platform.description + "; fabric: " + cfg.fabric.name + ", " +
                    format_quantity(cfg.fabric.bandwidth, Dimension::Bandwidth) + " per port, link latency " +
                    format_quantity(cfg.fabric.link_latency, Dimension::Time) + ", switch latency " +
                    format_quantity(cfg.fabric.switch_latency, Dimension::Time) + ", efficiency " +
                    efficiency_text(cfg.fabric.efficiency);
  header.op = flags.op;
  header.ranks = n;
  header.factor = bus_bandwidth_factor(flags.op, n);
  header.warmup = flags.warmup;
  header.iters = flags.iters;
  header.settings = settings_json(cfg);
  header.no_protocol = cfg.collectives.protocol == Protocol::None;
  print_header(flags.format, header);

  std::vector<Row> rows(flags.sizes.size());
  const auto between_sizes = simgrid::s4u::Barrier::create(static_cast<unsigned>(n));
  for (int r = 0; r < n; ++r) {
    simgrid::s4u::Actor::create("rank" + std::to_string(r), platform.workers[r], [&, r] {
      for (size_t i = 0; i < flags.sizes.size(); ++i) {
        for (int w = 0; w < flags.warmup; ++w) {
          between_sizes->wait();
          collective->run(r, flags.sizes[i]);
        }
        between_sizes->wait();
        const auto wall_start = std::chrono::steady_clock::now();
        const double start = simgrid::s4u::Engine::get_clock();
        for (int k = 0; k < flags.iters; ++k) {
          collective->run(r, flags.sizes[i]);
          between_sizes->wait();  // each iteration ends when the last rank is done
        }
        if (r != 0) continue;
        Row& row = rows[i];
        row.size = flags.sizes[i];
        row.start = start;
        row.end = start + (simgrid::s4u::Engine::get_clock() - start) / flags.iters;
        row.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count() / flags.iters;
        row.model = collective->predicted_seconds(flags.sizes[i]);
        row.variant = collective->variant(flags.sizes[i]);
        row.nccl = collective->nccl_predicted_seconds(flags.sizes[i]);
        print_row(flags.format, row, header.factor);
      }
    });
  }
  engine->run();
  if (flags.format == Format::Json) print_json(header, rows);
  return 0;
}

}  // namespace dtsim::sim
