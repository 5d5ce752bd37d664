// Whether a CUDA device can be used from this process. Built into every dtsim: when the CUDA sources are
// not compiled (DTSIM_CUDA=OFF or no nvcc), the answer says so instead of failing.
#pragma once

#include <string>

namespace dtsim::gpu {

struct CudaStatus {
  bool compiled = false;  // the CUDA backend was built into this binary
  bool usable = false;    // a device answered and ran a tiny kernel correctly
  int device_count = 0;
  std::string device_name;  // of device 0, when usable
  std::string reason;       // why not usable, in words a user can act on
};

// Probes the driver once: any error from the first CUDA call means "no GPU" (without a driver CUDA reports
// cudaErrorInsufficientDriver, not cudaErrorNoDevice). Never throws.
CudaStatus probe_cuda();

}  // namespace dtsim::gpu
