#include <cuda_runtime.h>

#include <vector>

#include "cuda_device.hpp"

namespace dtsim::gpu {
namespace {

__global__ void fill_iota(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<float>(i);
}

std::string describe(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
}

// Runs one kernel end to end, so "usable" means the device really executes our code (right arch, working
// driver), not merely that it is listed.
bool run_smoke_kernel(std::string* reason) {
  constexpr int n = 256;
  float* device = nullptr;
  cudaError_t err = cudaMalloc(&device, n * sizeof(float));
  if (err != cudaSuccess) {
    *reason = "cudaMalloc failed (" + describe(err) + ")";
    return false;
  }
  fill_iota<<<(n + 127) / 128, 128>>>(device, n);
  std::vector<float> host(n, -1.0f);
  err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaMemcpy(host.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(device);
  if (err != cudaSuccess) {
    *reason = "a test kernel failed (" + describe(err) + ")";
    return false;
  }
  for (int i = 0; i < n; ++i) {
    if (host[i] != static_cast<float>(i)) {
      *reason = "a test kernel returned wrong values";
      return false;
    }
  }
  return true;
}

}  // namespace

CudaStatus probe_cuda() {
  CudaStatus status;
  status.compiled = true;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    status.reason = "no usable CUDA device (" + describe(err) + ")";
    return status;
  }
  status.device_count = count;
  if (count == 0) {
    status.reason = "no CUDA device is visible";
    return status;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) status.device_name = prop.name;
  status.usable = run_smoke_kernel(&status.reason);
  return status;
}

}  // namespace dtsim::gpu
