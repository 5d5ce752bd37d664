#include "sim/app/calibrate_command.hpp"

#include <unistd.h>

#include <boost/program_options.hpp>
#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "gpu/backend.hpp"
#include "gpu/calibration.hpp"
#include "gpu/numerics_environment.hpp"
#include "models/workload/attention_time.hpp"
#include "sim/app/calibration_profile.hpp"
#include "sim/app/flags.hpp"
#include "sim/app/outputs.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/scenario/units.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace dtsim::sim {

namespace {

const char* const kHelp =
    "usage: dtsim calibrate --out DIR [options]\n"
    "\n"
    "Measures this machine's compute backend in wall-clock time and writes what it found as a GPU profile:\n"
    "FP32 matrix products over a sweep of shapes (square, skinny in rows, short and long in the inner\n"
    "dimension), y += a*x over vectors of 4 to 256 MiB (the memory bandwidth), and the same call on one element\n"
    "(the fixed cost of a call: a kernel launch on CUDA), and the attention op forward and backward over\n"
    "sequence lengths and head widths, with and without the causal mask. Each figure is the fastest of 5\n"
    "batches of calls.\n"
    "Prints every measurement beside the time the written profile gives it, and writes\n"
    "  DIR/gpu.ini          a [gpu] profile: peak = the fastest product's rate, efficiency = the largest\n"
    "                       product's rate over it, memory bandwidth, launch overhead; a run reads it with\n"
    "                       --set gpu.profile=DIR/gpu.ini (or gpu.profile in a scenario)\n"
    "  DIR/calibration.csv  one row per measurement, with the profile's time and its error\n"
    "  DIR/attention.csv    the attention measurements as the profile's gpu.attention_table\n"
    "DIR is created; a DIR that already holds any of these files is refused, so nothing is overwritten.\n"
    "\n"
    "  --out DIR           where to write (required)\n"
    "  --backend B         cpu | cuda | auto (default auto: CUDA when a device answers, else the CPU)\n"
    "  --name N            gpu.name in the profile (default: the backend's description)\n"
    "  --memory Q          gpu.memory in the profile, e.g. 80GB (default with the CPU backend: the host's\n"
    "                      physical memory; required with CUDA)\n"
    "  --quick             a small sweep with short batches (seconds; for tests, not for a profile to trust)\n"
    "  -h, --help          this text\n"
    "\n"
    "Simulated time never reads a clock otherwise: runs charge FLOP and byte counts at the profile's rates.\n";

struct Flags {
  bool help = false;
  bool quick = false;
  std::string out;
  std::string name;
  gpu::Device device = gpu::Device::Auto;
  double memory_bytes = 0;  // 0: not given
};

Flags parse_flags(int argc, char** argv) {
  po::options_description opts;
  opts.add_options()("out", po::value<std::string>())("backend", po::value<std::string>())(
      "name", po::value<std::string>())("memory", po::value<std::string>())("quick", po::bool_switch())(
      "help,h", po::bool_switch());
  const po::variables_map vm = parse_command_flags(argc, argv, opts, "extra", "calibrate");
  refuse_flags_as_values(vm, "calibrate");
  if (vm.count("extra"))
    throw InputError("command line", "", "unexpected argument '" + vm["extra"].as<std::vector<std::string>>().front() + "'",
                     "run 'dtsim calibrate --help'");
  Flags f;
  f.help = vm["help"].as<bool>();
  f.quick = vm["quick"].as<bool>();
  if (vm.count("out")) f.out = vm["out"].as<std::string>();
  if (vm.count("name")) {
    f.name = vm["name"].as<std::string>();
    // The name becomes an .ini value: '#' would start a comment there and a control character end the line.
    const bool unwritable = f.name.empty() || f.name.find('#') != std::string::npos ||
                            std::any_of(f.name.begin(), f.name.end(), [](char ch) {
                              return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f;
                            });
    if (unwritable)
      throw InputError("command line", "--name", "cannot be written as a profile value (empty, '#' or a control character)",
                       "give a plain name, e.g. --name my-gpu");
  }
  if (vm.count("backend")) {
    try {
      f.device = gpu::parse_device(vm["backend"].as<std::string>());
    } catch (const std::invalid_argument& e) {
      throw InputError("command line", "--backend", e.what(), "use cpu, cuda or auto");
    }
  }
  if (vm.count("memory")) {
    try {
      f.memory_bytes = parse_quantity(vm["memory"].as<std::string>(), Dimension::Bytes);
    } catch (const ValueError& e) {
      throw InputError("command line", "--memory", e.what(), e.hint());
    }
    if (!(f.memory_bytes > 0)) throw InputError("command line", "--memory", "must be positive", "write e.g. 80GB");
  }
  return f;
}

// The shapes measured: squares, then the skinny and long products that small batches, adapters and
// projections make; the CUDA backend gets larger squares, which only a GPU finishes in a fraction of a second.
struct AttentionPoint {
  int batch, seq, heads, head_dim;
};

struct Sweep {
  std::vector<std::array<int, 3>> products;  // m, n, k
  std::vector<size_t> stream_elements;
  std::vector<AttentionPoint> attention;  // each with and without the causal mask
  gpu::TimingBudget budget;
};

// Attention as FlashAttention's benchmark runs it: a fixed number of tokens and a fixed model width per call,
// over sequence lengths and head widths (16,384 tokens of width 2,048 there; a CPU gets 1,024 of 256).
std::vector<AttentionPoint> attention_sweep(int tokens, int width, const std::vector<int>& head_dims,
                                            const std::vector<int>& sequences) {
  std::vector<AttentionPoint> points;
  for (const int head_dim : head_dims)
    for (const int seq : sequences) points.push_back({tokens / seq, seq, width / head_dim, head_dim});
  return points;
}

Sweep sweep_for(bool quick, bool cuda) {
  Sweep s;
  if (quick) {
    s.products = {{32, 32, 32}, {64, 64, 64}, {128, 128, 128}, {4, 128, 128}};
    s.stream_elements = {size_t{1} << 16, size_t{1} << 18};
    s.attention = attention_sweep(64, 32, {16}, {16, 32});
    s.budget = {0.002, 3};
    return s;
  }
  std::vector<int> squares = {64, 128, 256, 512, 1024, 2048};
  if (cuda) squares.insert(squares.end(), {4096, 8192});
  for (const int n : squares) s.products.push_back({n, n, n});
  for (const int rows : {1, 8, 32, 128}) s.products.push_back({rows, 1024, 1024});
  for (const int inner : {16, 64}) s.products.push_back({1024, 1024, inner});
  s.products.push_back({128, 128, 8192});
  s.stream_elements = {size_t{1} << 20, size_t{1} << 22, size_t{1} << 24};
  if (cuda) s.stream_elements.push_back(size_t{1} << 26);
  s.attention = cuda ? attention_sweep(16384, 2048, {64, 128}, {512, 1024, 2048})
                     : attention_sweep(1024, 256, {32, 64}, {128, 256, 512});
  s.budget = {0.1, 5};
  return s;
}

double host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

std::string command_text(int argc, char** argv) {
  std::string s = "dtsim";
  for (int i = 0; i < argc; ++i) s += std::string(" ") + argv[i];
  return s;
}

}  // namespace

int command_calibrate(int argc, char** argv) {
  const Flags flags = parse_flags(argc, argv);
  if (flags.help) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (flags.out.empty()) throw InputError("command line", "--out", "is required", "give --out DIR, a folder to write");
  const fs::path out(flags.out);
  std::error_code ec;
  for (const char* name : {"gpu.ini", "calibration.csv", "attention.csv"})
    if (fs::exists(fs::symlink_status(out / name, ec)))
      throw InputError("command line", "--out", (out / name).string() + " exists and would be overwritten",
                       "give another folder, or move that file away");
  gpu::BackendChoice backend = [&] {
    try {
      return gpu::make_backend(flags.device);
    } catch (const std::runtime_error& e) {
      throw InputError("command line", "--backend", e.what(), "use --backend cpu or auto");
    }
  }();
  const bool cuda = backend.ops->name() != "cpu";
  double memory = flags.memory_bytes;
  if (memory == 0 && !cuda) memory = host_memory_bytes();
  if (memory == 0)
    throw InputError("command line", "--memory", "the device's memory is not known to this command",
                     "give it, e.g. --memory 80GB");

  // Made before measuring, so that a folder that cannot be written is said at once, not after the sweep.
  fs::create_directories(out, ec);
  if (ec || !fs::is_directory(out, ec))
    throw InputError("command line", "--out", "cannot make the folder " + flags.out + (ec ? ": " + ec.message() : ""),
                     "give a folder you can write");

  const Sweep sweep = sweep_for(flags.quick, cuda);
  std::printf("dtsim calibrate: %s%s\n", backend.description.c_str(), flags.quick ? " (quick sweep)" : "");
  Calibration c;
  gpu::Ops<float>& ops = *backend.ops;
  for (const auto& [m, n, k] : sweep.products) {
    ProductMeasurement p{m, n, k, gpu::time_gemm(ops, m, n, k, sweep.budget)};
    c.products.push_back(p);
  }
  for (const size_t count : sweep.stream_elements)
    c.streams.push_back({count, gpu::time_axpy(ops, count, sweep.budget)});
  c.empty_call_seconds = gpu::time_empty_call(ops, sweep.budget);
  for (const AttentionPoint& a : sweep.attention)
    for (const bool causal : {false, true}) {
      const gpu::AttentionSeconds t =
          gpu::time_attention(ops, a.batch, a.seq, a.heads, a.head_dim, causal, sweep.budget);
      c.attention.push_back({a.batch, a.seq, a.heads, a.head_dim, causal, t.forward, t.backward});
    }
  const CalibratedProfile profile = fit_profile(c);

  std::printf("%-22s %12s %12s %14s %8s\n", "product m x n x k", "measured ms", "GFLOP/s", "profile's ms", "error");
  for (const ProductMeasurement& p : c.products) {
    const double modelled = profile_seconds(profile, p);
    char shape[48];
    std::snprintf(shape, sizeof shape, "%d x %d x %d", p.m, p.n, p.k);
    std::printf("%-22s %12.4f %12.2f %14.4f %+7.1f%%\n", shape, p.seconds * 1e3, p.flop_rate() / 1e9, modelled * 1e3,
                100.0 * (modelled - p.seconds) / p.seconds);
  }
  for (const StreamMeasurement& s : c.streams)
    std::printf("y += a*x, %9zu floats: %10.4f ms, %8.2f GB/s\n", s.count, s.seconds * 1e3, s.bandwidth() / 1e9);
  std::printf("empty call: %.3f us\n", c.empty_call_seconds * 1e6);
  for (const AttentionMeasurement& a : c.attention)
    std::printf("attention %d x %d tokens, %d heads of %d%s: forward %.4f ms, backward %.4f ms (%.2f GFLOP/s "
                "forward + backward)\n",
                a.batch, a.seq, a.heads, a.head_dim, a.causal ? ", causal" : "", a.forward_seconds * 1e3,
                a.backward_seconds * 1e3,
                models::kAttentionForwardBackwardPasses * a.forward_flops() / (a.forward_seconds + a.backward_seconds) / 1e9);

  ProfileHeader header;
  header.name = flags.name.empty() ? "calibrated " + backend.description : flags.name;
  header.backend = backend.description;
  header.numerics = describe_numerics(gpu::numerics_fingerprint(cuda ? backend.description : "cpu"));
  header.command = command_text(argc, argv);
  header.date = utc_now();
  header.memory_bytes = memory;
  header.attention_table = "attention.csv";
  write_file_atomically(out.string(), "attention.csv", attention_table_csv(c.attention, header));
  write_file_atomically(out.string(), "calibration.csv", calibration_csv(c, profile));
  write_file_atomically(out.string(), "gpu.ini", profile_ini(profile, header));
  std::printf("profile: %s (peak %s, efficiency %.3f, %s, %s per launch)\n", (out / "gpu.ini").string().c_str(),
              format_quantity(profile.peak_flops, Dimension::FlopRate).c_str(), profile.efficiency,
              format_quantity(profile.memory_bandwidth, Dimension::Bandwidth).c_str(),
              format_quantity(profile.launch_overhead, Dimension::Time).c_str());
  std::printf("use it: --set gpu.profile=%s\n", (out / "gpu.ini").string().c_str());
  return 0;
}

}  // namespace dtsim::sim
