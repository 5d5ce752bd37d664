// Choosing the compute backend at run time: the CPU reference, or CUDA when this binary was built with it and a
// device answers. Works the same whether or not the CUDA sources were compiled in.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/ops.hpp"

namespace dtsim::gpu {

enum class Device { Cpu, Cuda, Auto };

// "cpu", "cuda" or "auto" (exactly, lower case). Throws std::invalid_argument naming the accepted values.
Device parse_device(const std::string& text);
const char* to_string(Device device);
std::vector<std::string> device_names();  // auto, cpu, cuda: a key's list of choices

struct BackendChoice {
  std::unique_ptr<Ops<float>> ops;
  std::string description;  // e.g. "cuda (NVIDIA H200, device 0)" or "cpu (no usable CUDA device (…))"
};

// Cpu: the CPU backend. Cuda: the CUDA backend on device 0, or std::runtime_error saying why it cannot be used.
// Auto: CUDA when probe_cuda() finds a usable device and the backend starts; otherwise the CPU backend, with the
// reason in the description.
BackendChoice make_backend(Device device);

}  // namespace dtsim::gpu
