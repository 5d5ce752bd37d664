// The hardware a scenario runs on: the GPU and fabric profiles, as resolved (profile file + overrides).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/name_table.hpp"

namespace dtsim::models {
class AttentionTable;
}

namespace dtsim::sim {

class Scenario;
struct RunConfig;

enum class MathMode { Fp32, Tf32, Bf16 };
const models::NameTable<MathMode>& math_mode_table();  // compute.math's names
inline const char* to_string(MathMode m) { return math_mode_table().name(m); }

// SimGrid's network model (network.model): cm02 = max-min sharing with latency + size / bandwidth; ib = its
// InfiniBand model (SMPI's factors and contention penalties).
enum class NetworkModel { Cm02, Ib };
const models::NameTable<NetworkModel>& network_model_table();
inline const char* to_string(NetworkModel m) { return network_model_table().name(m); }
const char* simgrid_model_name(NetworkModel m);  // "CM02", "IB": as SimGrid's network/model option spells it

// How a run times matrix products (compute.matmul): roofline = FLOPs at peak × gpu.efficiency; tiles = from each
// product's shape, over the GPU's SMs at its achievable rate (models/workload/matmul_time.hpp).
enum class MatmulModel { Roofline, Tiles };
const models::NameTable<MatmulModel>& matmul_model_table();
inline const char* to_string(MatmulModel m) { return matmul_model_table().name(m); }

struct GpuSpec {
  std::string name;
  double peak_fp32 = 0;  // FLOP/s
  double peak_tf32 = 0;
  double peak_bf16 = 0;
  double memory = 0;      // bytes
  double efficiency = 1;  // fraction of the peak matrix products reach
  // The per-layer roofline (models/workload/compute_time.hpp, sim/strategies/compute_cost.hpp) reads them too.
  double memory_bandwidth = 0;  // bytes/s; 0 = not known
  double launch_overhead = 0;   // seconds per kernel launch; 0 = not known
  double compute_capability = 0;  // CUDA's, e.g. 9.0 (NCCL's tuner reads it); 0 = not known
  // The shape-aware product model (compute.matmul = tiles): SMs, the largest GEMM tile, and the FLOP rate large
  // products reach per math mode (kernel benchmarks, not end-to-end utilisation); 0 = not known.
  int multiprocessors = 0;
  int matmul_tile_m = 128, matmul_tile_n = 256;
  double achievable_fp32 = 0, achievable_tf32 = 0, achievable_bf16 = 0;
  // The fraction of memory_bandwidth that streaming kernels reach (BabelStream's Triad, a device-to-device copy),
  // which compute.matmul = tiles times memory traffic at; 1 = the datasheet's bandwidth.
  double memory_efficiency = 1;
  // The measured BF16/FP16 throughput of the fused attention kernel (gpu.attention_table: a shipped table's name
  // or a CSV path), which compute.matmul = tiles times FlashAttention layers from; null = none given.
  std::shared_ptr<const models::AttentionTable> attention_table{};
  std::string attention_table_file{};
  double power_idle = 0;  // watts; 0 = not known
  double power_busy = 0;  // watts; 0 = not known
  double price_low = 0;   // per GPU-hour, in price_currency; 0 = no price
  double price_high = 0;
  // Braced so that tests may aggregate-initialise only the leading fields without -Wmissing-field-initializers.
  std::string price_currency{};  // e.g. "CNY"
  std::string price_region{};

  double peak(MathMode m) const { return m == MathMode::Fp32 ? peak_fp32 : m == MathMode::Tf32 ? peak_tf32 : peak_bf16; }
  double achievable(MathMode m) const {
    return m == MathMode::Fp32 ? achievable_fp32 : m == MathMode::Tf32 ? achievable_tf32 : achievable_bf16;
  }
  // The bandwidth memory traffic is timed at under a matrix model: tiles, the measured streaming fraction of the
  // datasheet's; the roofline keeps the datasheet's (it is a bound).
  double memory_bandwidth_for(MatmulModel model) const {
    return model == MatmulModel::Tiles ? memory_bandwidth * memory_efficiency : memory_bandwidth;
  }
  // The FLOP rate a simulated host of this GPU runs at (a layer's roofline is charged as work at this rate).
  double sustained(MathMode m) const { return peak(m) * efficiency; }

  bool has_power() const { return power_busy > 0; }
  bool has_price() const { return price_high > 0; }
  // The price a cost estimate uses: the middle of the quoted range (0 without a price).
  double price_mid() const { return (price_low + price_high) / 2; }
};

enum class FabricProtocol { Rdma, Tcp, Nvlink, Pcie, Wan };

struct FabricSpec {
  std::string name;
  double bandwidth = 0;       // nominal, bytes/s per port and direction
  double link_latency = 0;    // seconds per link
  double switch_latency = 0;  // seconds per switch traversal
  double efficiency = 1;      // achievable / nominal bandwidth
  FabricProtocol protocol = FabricProtocol::Rdma;
  double tcp_window = 0;  // bytes; 0 = flows are not window-limited
  // What the network adds to each GPU-hour (a rental surcharge, or the fabric's cost spread over its GPUs'
  // hours), a quoted range; 0 = no price. A run's bill adds it to the GPUs' price, in the same currency.
  double price_low = 0, price_high = 0;
  std::string price_currency{};
  bool has_price() const { return price_low > 0 && price_high > 0; }
  double price_mid() const { return 0.5 * (price_low + price_high); }

  // TCP carries the flows of tcp and wan fabrics, so a window caps each flow there.
  bool window_limited() const { return protocol == FabricProtocol::Tcp || protocol == FabricProtocol::Wan; }
  // The per-flow cap window / RTT for a route of one-way latency `route_latency` (infinite without a window).
  double window_rate_cap(double route_latency) const;
};

// Whether a bill adds the fabric's price per GPU-hour to the GPU's: both priced, in one currency (the
// configuration refuses a fabric price otherwise).
inline bool network_price_applies(const GpuSpec& gpu, const FabricSpec& fabric) {
  return gpu.has_price() && fabric.has_price() && fabric.price_currency == gpu.price_currency;
}

GpuSpec make_gpu_spec(const Scenario& scenario);
FabricSpec make_fabric_spec(const Scenario& scenario);
// Refuses a fabric price that a bill could not add to every GPU's: a GPU without a price, or another currency.
// `from_groups`: the GPUs are cluster.groups' (named in the message), not the [gpu] section's.
void check_network_price(const Scenario& scenario, const FabricSpec& fabric, const std::vector<const GpuSpec*>& gpus,
                         bool from_groups);
// [network]: SimGrid's network model and cross-traffic, into RunConfig::network_model and ::crosstraffic.
void read_network_section(const Scenario& scenario, RunConfig& config);

// "rdma", "tcp", … as written in fabric.protocol; throws std::invalid_argument for another word.
FabricProtocol parse_fabric_protocol(const std::string& word);
const char* fabric_protocol_name(FabricProtocol protocol);

}  // namespace dtsim::sim
