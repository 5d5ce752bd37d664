#include "sim/config/hardware_config.hpp"

#include <limits>
#include <stdexcept>

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
  if ((g.power_idle > 0) != (g.power_busy > 0))
    s.fail(g.power_busy > 0 ? "gpu.power_idle" : "gpu.power_busy", "is 0 while the other power value is set",
           "give both gpu.power_idle and gpu.power_busy, or neither");
  if (g.power_idle > g.power_busy)
    s.fail("gpu.power_idle", "is above gpu.power_busy", "idle power is the lower of the two");
}

void check_price(const Scenario& s, const GpuSpec& g) {
  const bool priced = g.price_low > 0 || g.price_high > 0;
  if (!priced) {
    if (!g.price_currency.empty())
      s.fail("gpu.price_currency", "is set but the GPU has no price", "set gpu.price_low and gpu.price_high");
    return;
  }
  if (g.price_low <= 0 || g.price_high <= 0)
    s.fail(g.price_low <= 0 ? "gpu.price_low" : "gpu.price_high", "is 0 while the other price is set",
           "give both ends of the price range");
  if (g.price_low > g.price_high) s.fail("gpu.price_low", "is above gpu.price_high", "give the range low to high");
  if (g.price_currency.empty()) s.fail("gpu.price_currency", "is empty but the GPU has a price", "e.g. CNY or USD");
}

}  // namespace

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

GpuSpec make_gpu_spec(const Scenario& s) {
  GpuSpec g;
  g.name = s.text("gpu.name").empty() ? s.text("gpu.profile") : s.text("gpu.name");
  g.peak_fp32 = s.quantity("gpu.peak_fp32");
  g.peak_tf32 = s.quantity("gpu.peak_tf32");
  g.peak_bf16 = s.quantity("gpu.peak_bf16");
  g.memory = s.quantity("gpu.memory");
  g.efficiency = s.real("gpu.efficiency");
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
  if (f.window_limited() && f.tcp_window <= 0)
    s.fail("fabric.tcp_window", std::string("is required for protocol ") + fabric_protocol_name(f.protocol),
           "e.g. 4MiB, Linux's default maximum send buffer");
  if (!f.window_limited() && f.tcp_window > 0)
    s.fail("fabric.tcp_window", std::string("applies only to protocol tcp or wan, not ") + fabric_protocol_name(f.protocol),
           "remove it or set fabric.protocol");
  return f;
}

}  // namespace dtsim::sim
