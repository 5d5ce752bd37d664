// Used when dtsim is built without the CUDA sources.
#include "cuda_device.hpp"

namespace dtsim::gpu {

CudaStatus probe_cuda() {
  CudaStatus status;
  status.reason = "dtsim was built without CUDA (DTSIM_CUDA=OFF, or nvcc was not found at /usr/local/cuda)";
  return status;
}

}  // namespace dtsim::gpu
