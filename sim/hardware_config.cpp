#include "hardware_config.hpp"

#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

GpuSpec make_gpu_spec(const Scenario& s) {
  GpuSpec g;
  g.name = s.text("gpu.name").empty() ? s.text("gpu.profile") : s.text("gpu.name");
  g.peak_fp32 = s.quantity("gpu.peak_fp32");
  g.peak_tf32 = s.quantity("gpu.peak_tf32");
  g.peak_bf16 = s.quantity("gpu.peak_bf16");
  g.memory = s.quantity("gpu.memory");
  g.efficiency = s.real("gpu.efficiency");
  return g;
}

FabricSpec make_fabric_spec(const Scenario& s) {
  FabricSpec f;
  f.name = s.text("fabric.name").empty() ? s.text("fabric.profile") : s.text("fabric.name");
  f.bandwidth = s.quantity("fabric.bandwidth");
  f.link_latency = s.quantity("fabric.link_latency");
  f.switch_latency = s.quantity("fabric.switch_latency");
  f.efficiency = s.real("fabric.efficiency");
  return f;
}

}  // namespace dtsim::sim
