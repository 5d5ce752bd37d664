#include "sim/config/hardware_config.hpp"

#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>

#include "models/input_file.hpp"
#include "models/workload/attention_time.hpp"
#include "models/workload/matmul_time.hpp"
#include "sim/config/choice.hpp"
#include "sim/config/run_config.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/key_builders.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/text.hpp"

namespace dtsim::sim {
namespace {

struct ProtocolName {
  FabricProtocol protocol;
  const char* name;
};
constexpr ProtocolName kProtocols[] = {{FabricProtocol::Rdma, "rdma"},
                                       {FabricProtocol::Tcp, "tcp"},
                                       {FabricProtocol::Nvlink, "nvlink"},
                                       {FabricProtocol::Pcie, "pcie"},
                                       {FabricProtocol::Wan, "wan"}};

// Power and price are optional as pairs: half a pair would make energy or cost silently wrong.
void check_power(const Scenario& s, const GpuSpec& g) {
  // Blamed where a value was set: the command line, the scenario, else the profile that gave half the pair (it
  // used to be the scenario file, whatever the profile said).
  if ((g.power_idle > 0) != (g.power_busy > 0)) {
    const std::string zero = g.power_busy > 0 ? "gpu.power_idle" : "gpu.power_busy";
    const std::string set = g.power_busy > 0 ? "gpu.power_busy" : "gpu.power_idle";
    s.fail_at_set({zero, set}, zero + " is 0 while " + set + " is set",
                  "give both gpu.power_idle and gpu.power_busy, or neither");
  }
  // Blamed where a value was set on the command line (a profile's line is not what the user changed).
  if (g.power_idle > g.power_busy)
    s.fail_at_set({"gpu.power_idle", "gpu.power_busy"},
                  "the idle power " + format_quantity(g.power_idle, Dimension::Power) + " is above the busy power " +
                      format_quantity(g.power_busy, Dimension::Power),
                  "idle power is the lower of the two");
}

// A price range of `section` (gpu or fabric): both ends or neither, low to high, with its currency. Returns
// whether it is priced.
bool check_price_range(const Scenario& s, const std::string& section, double low, double high,
                       const std::string& currency) {
  const auto key = [&](const char* name) { return section + "." + name; };
  const std::string what = section == "gpu" ? "GPU" : section;
  // Blamed where a value was set on the command line (zeroing a profile's price there is the usual cause).
  if (low <= 0 && high <= 0) {
    if (!currency.empty())
      s.fail_at_set({key("price_low"), key("price_high"), key("price_currency")},
                    "the " + what + " has no price (" + key("price_low") + " and " + key("price_high") +
                        " are 0) but " + key("price_currency") + " is '" + currency + "'",
                    "for no price empty the currency too (" + key("price_currency") + "=), or give both ends");
    return false;
  }
  if (low <= 0 || high <= 0)
    s.fail_at_set({key(low <= 0 ? "price_low" : "price_high"), key(low <= 0 ? "price_high" : "price_low")},
                  key(low <= 0 ? "price_low" : "price_high") + " is 0 while " +
                      key(low <= 0 ? "price_high" : "price_low") + " is set",
                  "give both ends of the price range");
  if (low > high)
    s.fail_at_set({key("price_low"), key("price_high")},
                  "the price range runs from " + short_number(low) + " down to " + short_number(high),
                  "give the range low to high");
  // Blamed where the price was given (a profile's line, unless the scenario or a --set gave it).
  if (currency.empty())
    s.fail_at_set({key("price_low"), key("price_high"), key("price_currency")},
                  "the " + what + " has a price but " + key("price_currency") + " is empty",
                  section == "gpu" ? "set it, e.g. CNY or USD" : "set it to the GPU's currency (the two prices are added)");
  return true;
}

void check_price(const Scenario& s, const GpuSpec& g) {
  check_price_range(s, "gpu", g.price_low, g.price_high, g.price_currency);
}

}  // namespace

// A network price is a surcharge on GPU-hours: it needs every GPU's price, in the same currency, to add to.
void check_network_price(const Scenario& s, const FabricSpec& f, const std::vector<const GpuSpec*>& gpus,
                         bool from_groups) {
  if (!f.has_price()) return;
  for (const GpuSpec* g : gpus) {
    const std::string which = from_groups ? "the " + g->name + " of cluster.groups" : "the GPU";
    if (!g->has_price())
      s.fail("fabric.price_low",
             "the network's price is added to the GPUs' price per GPU-hour, but " + which + " has none",
             from_groups ? "give that group a GPU profile with a price, or remove the network's price"
                         : "set gpu.price_low, gpu.price_high and gpu.price_currency too");
    if (f.price_currency != g->price_currency)
      s.fail("fabric.price_currency",
             "is '" + f.price_currency + "' but " + which + " is priced in '" + g->price_currency +
                 "'; the two are added",
             "give the network's price in " + g->price_currency);
  }
}

const models::NameTable<MathMode>& math_mode_table() {
  static const models::NameTable<MathMode> table{{MathMode::Fp32, "fp32"}, {MathMode::Tf32, "tf32"}, {MathMode::Bf16, "bf16"}};
  return table;
}

const models::NameTable<NetworkModel>& network_model_table() {
  static const models::NameTable<NetworkModel> table{{NetworkModel::Cm02, "cm02"}, {NetworkModel::Ib, "ib"}};
  return table;
}

const models::NameTable<MatmulModel>& matmul_model_table() {
  static const models::NameTable<MatmulModel> table{{MatmulModel::Roofline, "roofline"}, {MatmulModel::Tiles, "tiles"}};
  return table;
}

const char* simgrid_model_name(NetworkModel m) { return m == NetworkModel::Ib ? "IB" : "CM02"; }

double FabricSpec::window_rate_cap(double route_latency) const {
  if (!window_limited() || tcp_window <= 0 || route_latency <= 0) return std::numeric_limits<double>::infinity();
  return tcp_window / (2 * route_latency);
}

FabricProtocol parse_fabric_protocol(const std::string& word) {
  for (const ProtocolName& p : kProtocols)
    if (word == p.name) return p.protocol;
  throw std::invalid_argument("unknown fabric protocol '" + word + "'");
}

const char* fabric_protocol_name(FabricProtocol protocol) {
  for (const ProtocolName& p : kProtocols)
    if (p.protocol == protocol) return p.name;
  return "?";
}

// gpu.attention_table: read and checked when the profile is, so that a bad table is an input error at its
// own line before anything runs. Its problems name the table's file and line.
// A name (no '/', no .csv) is a shipped table in the profile folder's gpu/attention/ ($DTSIM_PROFILE_DIR or the
// source tree's), so that a profile copied elsewhere still finds it; a path is read from the folder of the file
// that set it.
static std::string attention_table_path(const Scenario& s) {
  const std::string value = trim(s.text("gpu.attention_table"));
  const bool is_path = value.find('/') != std::string::npos || std::filesystem::path(value).extension() == ".csv";
  if (value.empty() || is_path) return s.file_path("gpu.attention_table");
  return (std::filesystem::path(default_profile_dir()) / "gpu" / "attention" / (value + ".csv")).string();
}

static void load_attention_table(const Scenario& s, GpuSpec& g) {
  const std::string path = attention_table_path(s);
  if (path.empty()) return;
  models::InputFileProblem problem;
  const std::optional<std::string> text = models::read_input_file(path, models::kMaxTextInputBytes, problem);
  if (!text)
    s.fail("gpu.attention_table", "attention table '" + path + "' " + problem.reason,
           "give a table's name in network_profiles/gpu/attention/ (e.g. h100-80gb-flash2) or a CSV of "
           "pass,causal,head_dim,sequence,tflops, or leave it empty");
  try {
    g.attention_table = std::make_shared<const models::AttentionTable>(models::parse_attention_table(*text));
  } catch (const models::AttentionTableError& e) {
    if (e.line > 0)
      throw InputError(Origin::at(path, e.line), "gpu.attention_table", e.what(),
                       "each line is pass,causal,head_dim,sequence,tflops, e.g. forward+backward,yes,128,2048,265");
    s.fail("gpu.attention_table", "attention table '" + path + "': " + e.what(),
           "give forward+backward points for both masks");
  }
  g.attention_table_file = path;
}

GpuSpec make_gpu_spec(const Scenario& s) {
  GpuSpec g;
  g.name = s.text("gpu.name").empty() ? s.text("gpu.profile") : s.text("gpu.name");
  g.peak_fp32 = s.quantity("gpu.peak_fp32");
  g.peak_tf32 = s.quantity("gpu.peak_tf32");
  g.peak_bf16 = s.quantity("gpu.peak_bf16");
  g.memory = s.quantity("gpu.memory");
  g.efficiency = s.real("gpu.efficiency");
  g.memory_bandwidth = s.quantity("gpu.memory_bandwidth");
  g.launch_overhead = s.quantity("gpu.launch_overhead");
  g.compute_capability = s.real("gpu.compute_capability");
  // CUDA's capabilities start at 1.0; below it a value can only be a slip (0 itself means not known).
  if (g.compute_capability > 0 && g.compute_capability < 1)
    s.fail("gpu.compute_capability", "must be 0 (not known) or a CUDA compute capability, 1.0 or more",
           "write e.g. 8.0 for an A100 or 9.0 for an H100");
  g.multiprocessors = static_cast<int>(s.integer("gpu.multiprocessors"));
  try {
    const models::TileSize tile = models::parse_tile(trim(s.text("gpu.matmul_tile")));
    g.matmul_tile_m = tile.m;
    g.matmul_tile_n = tile.n;
  } catch (const std::invalid_argument& e) {
    s.fail("gpu.matmul_tile", e.what(), "write rows x columns, e.g. 128x256");
  }
  g.achievable_fp32 = s.quantity("gpu.achievable_fp32");
  g.achievable_tf32 = s.quantity("gpu.achievable_tf32");
  g.achievable_bf16 = s.quantity("gpu.achievable_bf16");
  for (const char* mode : {"fp32", "tf32", "bf16"}) {
    const std::string key = std::string("gpu.achievable_") + mode, peak = std::string("gpu.peak_") + mode;
    if (s.quantity(key) > s.quantity(peak))
      s.fail_at_set({key, peak}, "is above " + peak + ": a kernel cannot beat the peak",
                    "give the rate large products were measured at, at most the peak");
  }
  g.memory_efficiency = s.real("gpu.memory_efficiency");
  load_attention_table(s, g);
  g.power_idle = s.quantity("gpu.power_idle");
  g.power_busy = s.quantity("gpu.power_busy");
  g.price_low = s.real("gpu.price_low");
  g.price_high = s.real("gpu.price_high");
  g.price_currency = trim(s.text("gpu.price_currency"));
  g.price_region = trim(s.text("gpu.price_region"));
  check_power(s, g);
  check_price(s, g);
  return g;
}

FabricSpec make_fabric_spec(const Scenario& s) {
  FabricSpec f;
  f.name = s.text("fabric.name").empty() ? s.text("fabric.profile") : s.text("fabric.name");
  f.bandwidth = s.quantity("fabric.bandwidth");
  f.link_latency = s.quantity("fabric.link_latency");
  f.switch_latency = s.quantity("fabric.switch_latency");
  f.efficiency = s.real("fabric.efficiency");
  f.protocol = parse_fabric_protocol(trim(s.text("fabric.protocol")));
  f.tcp_window = s.quantity("fabric.tcp_window");
  f.price_low = s.real("fabric.price_low");
  f.price_high = s.real("fabric.price_high");
  f.price_currency = trim(s.text("fabric.price_currency"));
  // Its sum with the GPUs' price is checked once the GPUs are known (check_network_price).
  check_price_range(s, "fabric", f.price_low, f.price_high, f.price_currency);
  // Blamed where the protocol was chosen (a profile's line, unless the scenario or a --set chose it or the window).
  if (f.window_limited() && f.tcp_window <= 0)
    s.fail_at_set({"fabric.protocol", "fabric.tcp_window"},
                  std::string("protocol ") + fabric_protocol_name(f.protocol) + " needs fabric.tcp_window",
                  "set fabric.tcp_window, e.g. 4MiB, Linux's default maximum send buffer");
  if (!f.window_limited() && f.tcp_window > 0)
    s.fail("fabric.tcp_window", std::string("applies only to protocol tcp or wan, not ") + fabric_protocol_name(f.protocol),
           "remove it or set fabric.protocol");
  return f;
}

void read_network_section(const Scenario& s, RunConfig& c) {
  c.network_model = choice_value(network_model_table(), s, "network.model");
  c.crosstraffic = s.boolean("network.crosstraffic");
}

// ---- keys ------------------------------------------------------------------------------------------------
// Scenario keys: GPU and fabric profiles and the network model.
using namespace key_builders;

void add_hardware_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      // ---- gpu profile ----------------------------------------------------------------------------------
      text("gpu.profile", "a100-40gb",
           "GPU profile: a name in network_profiles/gpu/ or a path to a .ini file; its fields can be overridden here; "
           "empty = no profile, every gpu key set here",
           true),
      text("gpu.name", "", "Display name of the GPU", true),
      quantity("gpu.peak_fp32", Dimension::FlopRate, "", positive(), "Peak dense FP32 throughput (non-tensor-core)"),
      quantity("gpu.peak_tf32", Dimension::FlopRate, "", positive(), "Peak dense TF32 tensor-core throughput"),
      quantity("gpu.peak_bf16", Dimension::FlopRate, "", positive(), "Peak dense BF16/FP16 tensor-core throughput"),
      quantity("gpu.memory", Dimension::Bytes, "", positive(), "Device memory"),
      real("gpu.efficiency", "", fraction_open_closed(),
           "Fraction of the peak that matrix products reach; each layer takes max(FLOPs / (peak × efficiency), "
           "bytes / memory_bandwidth) plus its launches"),
      // A zero default keeps profiles written before these keys existed loadable; 0 reads as "not known".
      quantity("gpu.memory_bandwidth", Dimension::Bandwidth, "0B/s", at_least(0),
               "Device memory bandwidth: the memory side of each layer's roofline (0 = not known: bytes cost nothing)"),
      quantity("gpu.launch_overhead", Dimension::Time, "0s", at_least(0),
               "Time added per kernel launch, on top of each layer's roofline (0 = not known: launches cost nothing)"),
      real("gpu.compute_capability", "0", between(0, 20),
           "CUDA compute capability, e.g. 9.0 for Hopper: NCCL's tuner (collective.tuner = nccl) reads its tables by "
           "GPU generation (0 = not known: taken as 8.0, Ampere)"),
      integer("gpu.multiprocessors", "0", between(0, 100000),
              "Streaming multiprocessors: GEMM tiles run in waves of this many under compute.matmul = tiles "
              "(0 = not known)"),
      text("gpu.matmul_tile", "128x256",
           "The largest output tile (rows x columns) the GEMM library gives one SM; compute.matmul = tiles also "
           "tries its halvings down to 64x64"),
      quantity("gpu.achievable_fp32", Dimension::FlopRate, "0FLOPS", at_least(0),
               "FLOP rate large FP32 products reach in a kernel benchmark, for compute.matmul = tiles (0 = not known)"),
      quantity("gpu.achievable_tf32", Dimension::FlopRate, "0FLOPS", at_least(0),
               "FLOP rate large TF32 products reach in a kernel benchmark, for compute.matmul = tiles (0 = not known)"),
      quantity("gpu.achievable_bf16", Dimension::FlopRate, "0FLOPS", at_least(0),
               "FLOP rate large BF16/FP16 products reach in a kernel benchmark, for compute.matmul = tiles "
               "(0 = not known)"),
      real("gpu.memory_efficiency", "1", fraction_open_closed(),
           "Fraction of gpu.memory_bandwidth a streaming kernel benchmark reaches (BabelStream Triad, a device-to-device "
           "copy); compute.matmul = tiles times element-wise, normalisation and optimizer kernels and product operands "
           "at memory_bandwidth × it (1 = the datasheet's bandwidth)"),
      text("gpu.attention_table", "",
           "The fused attention kernel's measured BF16/FP16 throughput: a table's name in network_profiles/gpu/attention/, "
           "or a CSV path (pass,causal,head_dim,sequence,tflops) relative to the file that sets it; compute.matmul = "
           "tiles times FlashAttention layers from it (empty = none: their FLOPs run at gpu.achievable_bf16)",
           true),
      quantity("gpu.power_idle", Dimension::Power, "0W", at_least(0),
               "Board power of a GPU that runs no kernel (0 = not known)"),
      quantity("gpu.power_busy", Dimension::Power, "0W", at_least(0),
               "Board power under full load, the maximum board power / TDP (0 = not known)"),
      real("gpu.price_low", "0", at_least(0), "Lowest quoted rental price per GPU-hour (0 = no price)"),
      real("gpu.price_high", "0", at_least(0),
           "Highest quoted rental price per GPU-hour; the midpoint of low and high is used for cost (0 = no price)"),
      text("gpu.price_currency", "", "Currency of the prices, e.g. CNY or USD (required with a price)", true),
      text("gpu.price_region", "", "Where the prices were quoted, e.g. Beijing", true),
      // ---- fabric profile -------------------------------------------------------------------------------
      text("fabric.profile", "ib-hdr-200",
           "Fabric profile: a name in network_profiles/fabric/ or a path to a .ini file; fields can be overridden; "
           "empty = no profile, every fabric key set here",
           true),
      text("fabric.name", "", "Display name of the fabric", true),
      quantity("fabric.bandwidth", Dimension::Bandwidth, "", positive(), "Nominal bandwidth per port and direction"),
      quantity("fabric.link_latency", Dimension::Time, "", at_least(0),
               "Latency of one link (NIC, cable and serialisation), per hop"),
      quantity("fabric.switch_latency", Dimension::Time, "", at_least(0), "Port-to-port latency of one switch"),
      real("fabric.efficiency", "", fraction_open_closed(),
           "Achievable fraction of nominal bandwidth for large messages (protocol and encoding overhead)"),
      // rdma is what every fabric was before this key existed: no window limits a flow.
      choice("fabric.protocol", "rdma", {"rdma", "tcp", "nvlink", "pcie", "wan"},
             "Transport: rdma (InfiniBand, RoCE), tcp (kernel TCP over Ethernet), nvlink, pcie (inside a node), "
             "wan (TCP between sites)"),
      real("fabric.price_low", "0", at_least(0),
           "What the network adds per GPU-hour, low end of the quoted range, in gpu.price_currency (0 = no price)"),
      real("fabric.price_high", "0", at_least(0), "What the network adds per GPU-hour, high end of the range"),
      text("fabric.price_currency", "", "Currency of the network's price: the GPU's, since the two are added", true),
      quantity("fabric.tcp_window", Dimension::Bytes, "0B", at_least(0),
               "TCP window that caps one flow at window / round-trip time (SimGrid's network/TCP-gamma); "
               "required for tcp and wan, 0 = no window (other protocols)"),
      // ---- network model ---------------------------------------------------------------------------------
      choice("network.model", "cm02", network_model_table().names(),
             "SimGrid network model: cm02 = max-min fair sharing, latency + size/bandwidth, calibrated per fabric"),
      boolean("network.crosstraffic", "false",
              "Model the reverse-direction load of each flow (acknowledgements); off matches the alpha-beta model"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
