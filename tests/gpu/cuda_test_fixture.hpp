// The fixture of the CUDA backend tests: probes the device once per process and skips every test, with the
// probe's reason, when there is no usable GPU (no driver, no device, a kernel that does not run).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "gpu/buffer.hpp"
#include "gpu/cpu_ops.hpp"
#include "gpu/cuda_device.hpp"
#include "gpu/cuda_ops.hpp"
#include "tests/gpu/test_support.hpp"

namespace dtsim::gpu {

// fp32 agreement between the backends required by the op contracts.
constexpr double kBackendTolerance = 1e-4;

class CudaOpsTest : public ::testing::Test {
 protected:
  static const CudaStatus& device_status() {
    static const CudaStatus status = probe_cuda();
    return status;
  }

  // One backend per process, made on first use (the tests run one per process under ctest anyway).
  static CudaOps& cuda() {
    static std::unique_ptr<CudaOps> ops = std::make_unique<CudaOps>(0);
    return *ops;
  }

  void SetUp() override {
    if (!device_status().usable) GTEST_SKIP() << device_status().reason;
    cuda().set_conv_scratch_limit(CudaOps::kDefaultConvScratchLimit);
  }

  Buffer<float> on_device(const std::vector<float>& host) {
    Buffer<float> buffer(cuda(), host.size());
    cuda().upload(buffer.data(), host.data(), host.size());
    return buffer;
  }

  Buffer<float> device_filled(size_t count, float value) {
    Buffer<float> buffer(cuda(), count);
    cuda().fill(buffer.data(), count, value);
    return buffer;
  }

  std::vector<float> on_host(const Buffer<float>& buffer) {
    std::vector<float> host(buffer.size());
    cuda().download(host.data(), buffer.data(), host.size());
    return host;
  }

  CpuOps<float> cpu;
};

}  // namespace dtsim::gpu
