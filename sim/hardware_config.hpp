// The hardware a scenario runs on: the GPU and fabric profiles, as resolved (profile file + overrides).
#pragma once

#include <string>

namespace dtsim::sim {

class Scenario;

enum class MathMode { Fp32, Tf32, Bf16 };

struct GpuSpec {
  std::string name;
  double peak_fp32 = 0;  // FLOP/s
  double peak_tf32 = 0;
  double peak_bf16 = 0;
  double memory = 0;      // bytes
  double efficiency = 1;  // sustained fraction of peak

  double peak(MathMode m) const { return m == MathMode::Fp32 ? peak_fp32 : m == MathMode::Tf32 ? peak_tf32 : peak_bf16; }
  // The FLOP rate a simulated host of this GPU runs at.
  double sustained(MathMode m) const { return peak(m) * efficiency; }
};

struct FabricSpec {
  std::string name;
  double bandwidth = 0;       // nominal, bytes/s per port and direction
  double link_latency = 0;    // seconds per link
  double switch_latency = 0;  // seconds per switch traversal
  double efficiency = 1;      // achievable / nominal bandwidth
};

GpuSpec make_gpu_spec(const Scenario& scenario);
FabricSpec make_fabric_spec(const Scenario& scenario);

}  // namespace dtsim::sim
