// Choosing a backend: works with and without CUDA compiled in, with and without a GPU present.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/backend.hpp"
#include "gpu/cuda_device.hpp"

namespace dtsim::gpu {
namespace {

TEST(Backend, ParsesDeviceNames) {
  EXPECT_EQ(parse_device("cpu"), Device::Cpu);
  EXPECT_EQ(parse_device("cuda"), Device::Cuda);
  EXPECT_EQ(parse_device("auto"), Device::Auto);
  for (const Device d : {Device::Cpu, Device::Cuda, Device::Auto}) EXPECT_EQ(parse_device(to_string(d)), d);
  EXPECT_EQ(device_names(), (std::vector<std::string>{"auto", "cpu", "cuda"}));
  for (const char* bad : {"", "CPU", "gpu", "cuda:0"}) {
    try {
      parse_device(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("auto, cpu, cuda"), std::string::npos) << e.what();
    }
  }
}

// The chosen backend really computes: a 2 × 2 product through upload, gemm and download.
void expect_working(Ops<float>& ops) {
  const std::vector<float> a{1, 2, 3, 4}, b{0, 1, 1, 0};
  float* da = ops.allocate(4);
  float* db = ops.allocate(4);
  float* dc = ops.allocate(4);
  ops.upload(da, a.data(), 4);
  ops.upload(db, b.data(), 4);
  ops.gemm(Transpose::No, Transpose::No, 1.0f, {da, 2, 2}, {db, 2, 2}, 0.0f, {dc, 2, 2});
  std::vector<float> c(4);
  ops.download(c.data(), dc, 4);
  EXPECT_EQ(c, (std::vector<float>{2, 1, 4, 3}));
  ops.release(da);
  ops.release(db);
  ops.release(dc);
}

TEST(Backend, CpuIsAlwaysAvailable) {
  const BackendChoice choice = make_backend(Device::Cpu);
  ASSERT_TRUE(choice.ops);
  EXPECT_EQ(choice.ops->name(), "cpu");
  EXPECT_EQ(choice.description, "cpu");
  expect_working(*choice.ops);
}

TEST(Backend, AutoUsesCudaWhenUsableElseSaysWhyNot) {
  const CudaStatus status = probe_cuda();
  const BackendChoice choice = make_backend(Device::Auto);
  ASSERT_TRUE(choice.ops);
  if (status.usable) {
    EXPECT_EQ(choice.ops->name(), "cuda");
    EXPECT_EQ(choice.description, "cuda (" + status.device_name + ", device 0)");
  } else {
    EXPECT_EQ(choice.ops->name(), "cpu");
    EXPECT_EQ(choice.description, "cpu (" + status.reason + ")");
  }
  expect_working(*choice.ops);
}

TEST(Backend, CudaWithoutAUsableDeviceIsAnErrorWithTheReason) {
  const CudaStatus status = probe_cuda();
  if (status.usable) {
    const BackendChoice choice = make_backend(Device::Cuda);
    ASSERT_TRUE(choice.ops);
    EXPECT_EQ(choice.ops->name(), "cuda");
    expect_working(*choice.ops);
    return;
  }
  try {
    make_backend(Device::Cuda);
    FAIL() << "the CUDA backend was made without a usable device";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(status.reason), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dtsim::gpu
