#include "gpu/backend.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "gpu/cuda_device.hpp"
#ifdef DTSIM_HAVE_CUDA
#include "gpu/cuda_ops.hpp"
#endif

namespace dtsim::gpu {
namespace {

BackendChoice cpu_backend(const std::string& why) {
  return BackendChoice{std::make_unique<CpuOps<float>>(), why.empty() ? "cpu" : "cpu (" + why + ")"};
}

// The CUDA backend on device 0, or the reason it cannot be had. Never throws.
BackendChoice try_cuda_backend(std::string* reason) {
  const CudaStatus status = probe_cuda();
  if (!status.usable) {
    *reason = status.reason;
    return {};
  }
#ifdef DTSIM_HAVE_CUDA
  try {
    auto ops = std::make_unique<CudaOps>(0);
    std::string description = "cuda (" + ops->device_name() + ", device 0)";
    return BackendChoice{std::move(ops), std::move(description)};
  } catch (const std::exception& e) {
    *reason = std::string("the CUDA backend did not start: ") + e.what();
    return {};
  }
#else
  *reason = "dtsim was built without the CUDA backend";  // unreachable: the stub probe never reports usable
  return {};
#endif
}

}  // namespace

namespace {

// The one list of the devices' names, in the order a key offers them.
struct DeviceName {
  Device device;
  const char* name;
};
constexpr DeviceName kDeviceNames[] = {{Device::Auto, "auto"}, {Device::Cpu, "cpu"}, {Device::Cuda, "cuda"}};

}  // namespace

Device parse_device(const std::string& text) {
  for (const DeviceName& d : kDeviceNames)
    if (text == d.name) return d.device;
  std::string accepted;
  for (const std::string& name : device_names()) accepted += (accepted.empty() ? "" : ", ") + name;
  throw std::invalid_argument("unknown compute device '" + text + "'; accepted: " + accepted);
}

const char* to_string(Device device) {
  for (const DeviceName& d : kDeviceNames)
    if (d.device == device) return d.name;
  return "?";
}

std::vector<std::string> device_names() {
  std::vector<std::string> names;
  for (const DeviceName& d : kDeviceNames) names.push_back(d.name);
  return names;
}

BackendChoice make_backend(Device device) {
  if (device == Device::Cpu) return cpu_backend("");
  std::string reason;
  BackendChoice cuda = try_cuda_backend(&reason);
  if (cuda.ops) return cuda;
  if (device == Device::Cuda) throw std::runtime_error("the CUDA backend was requested, but " + reason);
  return cpu_backend(reason);
}

}  // namespace dtsim::gpu
