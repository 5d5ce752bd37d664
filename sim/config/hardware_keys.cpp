// Scenario keys: GPU and fabric profiles and the network model.
#include "sim/config/schema.hpp"
#include "sim/scenario/key_builders.hpp"

namespace dtsim::sim {

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
           "Sustained fraction of peak reached by training kernels; compute time = FLOPs / (peak × efficiency)"),
      // A zero default keeps profiles written before these keys existed loadable; 0 reads as "not known".
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
      quantity("fabric.tcp_window", Dimension::Bytes, "0B", at_least(0),
               "TCP window that caps one flow at window / round-trip time (SimGrid's network/TCP-gamma); "
               "required for tcp and wan, 0 = no window (other protocols)"),
      // ---- network model ---------------------------------------------------------------------------------
      choice("network.model", "cm02", {"cm02", "ib"},
             "SimGrid network model: cm02 = max-min fair sharing, latency + size/bandwidth, calibrated per fabric"),
      boolean("network.crosstraffic", "false",
              "Model the reverse-direction load of each flow (acknowledgements); off matches the alpha-beta model"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
