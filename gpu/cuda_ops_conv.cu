// CudaOps: 2-D convolution as im2col + cuBLAS, following the steps of cuda_conv_plan.hpp. The batch goes in
// chunks of samples whose im2col matrices fit in the caller's scratch, each chunk one strided-batched GEMM; the
// weight gradient adds the samples' products in sample order and col2im gathers (one thread per input pixel), so
// nothing races and the results are deterministic.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "gpu/cuda_conv_plan.hpp"
#include "gpu/cuda_ops.hpp"
#include "gpu/cuda_support.cuh"

namespace dtsim::gpu {

using cuda_detail::block_reduce;
using cuda_detail::check_launch;
using cuda_detail::launch_for_each;

namespace {

kernels::ConvGeometry checked_geometry(const ConvShape& s, const char* op) {
  const bool positive = s.batch >= 0 && s.in_channels > 0 && s.height > 0 && s.width > 0 && s.out_channels > 0 &&
                        s.kernel_h > 0 && s.kernel_w > 0 && s.stride > 0 && s.pad >= 0;
  if (!positive) throw std::invalid_argument(std::string("cuda backend: ") + op + ": invalid convolution shape");
  if (s.out_h() <= 0 || s.out_w() <= 0) {
    throw std::invalid_argument(std::string("cuda backend: ") + op + ": kernel larger than the padded input");
  }
  return kernels::conv_geometry(s);
}

// dbias[oc] = Σ over samples and positions of dy, one block per output channel.
__global__ void channel_grad_sums_kernel(const float* dy, int batch, int out_channels, int positions, float* dbias) {
  __shared__ double shared[kernels::kRowThreads];
  const int channel = static_cast<int>(blockIdx.x);
  const kernels::ChannelGradTerm term{dy, out_channels, positions, channel};
  const size_t count = static_cast<size_t>(batch) * positions;
  const double total = block_reduce(kernels::strided_sum(term, count, threadIdx.x, blockDim.x), shared, kernels::Add{});
  if (threadIdx.x == 0) dbias[channel] = static_cast<float>(total);
}

// The plan's executor on the device.
struct DeviceExec {
  CudaOps& ops;
  template <class Op>
  void for_each(size_t count, Op op, const char* name) {
    launch_for_each(count, op, (std::string(name) + " kernel launch").c_str());
  }
  void gemm(Transpose ta, Transpose tb, int m, int n, int k, float alpha, const float* a, long long stride_a,
            const float* b, long long stride_b, float beta, float* c, long long stride_c, int batch) {
    ops.gemm_strided_batched(ta, tb, m, n, k, alpha, a, stride_a, b, stride_b, beta, c, stride_c, batch);
  }
  void channel_grad_sums(const float* dy, int batch, int out_channels, int positions, float* dbias) {
    channel_grad_sums_kernel<<<out_channels, kernels::kRowThreads>>>(dy, batch, out_channels, positions, dbias);
    check_launch("conv2d_backward bias-gradient kernel launch");
  }
  void fill(float* x, size_t count, float value) { ops.fill(x, count, value); }
};

}  // namespace

size_t CudaOps::conv2d_scratch_size(const ConvShape& shape) {
  const kernels::ConvGeometry g = checked_geometry(shape, "conv2d_scratch_size");
  const int chunk = kernels::conv_samples_per_chunk(g.col_size(), std::max(shape.batch, 1), conv_scratch_limit_);
  return static_cast<size_t>(chunk) * g.col_size();
}

void CudaOps::conv2d_forward(const ConvShape& shape, const float* x, const float* w, const float* bias, float* y,
                             float* scratch) {
  const kernels::ConvGeometry g = checked_geometry(shape, "conv2d_forward");
  const int chunk = kernels::conv_samples_per_chunk(g.col_size(), std::max(shape.batch, 1), conv_scratch_limit_);
  DeviceExec exec{*this};
  kernels::conv2d_forward_plan(exec, g, shape.batch, chunk, x, w, bias, y, scratch);
}

void CudaOps::conv2d_backward(const ConvShape& shape, const float* x, const float* w, const float* dy, float* dx,
                              float* dw, float* dbias, float* scratch) {
  const kernels::ConvGeometry g = checked_geometry(shape, "conv2d_backward");
  const int chunk = kernels::conv_samples_per_chunk(g.col_size(), std::max(shape.batch, 1), conv_scratch_limit_);
  DeviceExec exec{*this};
  kernels::conv2d_backward_plan(exec, g, shape.batch, chunk, x, w, dy, dx, dw, dbias, scratch);
}

}  // namespace dtsim::gpu
