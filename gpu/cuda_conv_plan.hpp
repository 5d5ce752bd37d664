// The steps of the CUDA convolution, written once against an executor: CudaOps runs them with kernels and cuBLAS
// (cuda_ops_conv.cu), the host test with loops and a column-major GEMM written from cuBLAS's definition
// (tests/gpu/host_kernel_emulation.hpp). So the chunking and every GEMM's sizes, transposes and strides are
// checked on machines without a GPU.
//
// An executor provides:
//   for_each(count, functor, name)       calls functor(i) for i < count
//   gemm(ta, tb, m, n, k, alpha, a, stride_a, b, stride_b, beta, c, stride_c, batch)
//                                        row-major strided-batched GEMM, as CudaOps::gemm_strided_batched
//   channel_grad_sums(dy, batch, out_channels, positions, dbias)
//                                        dbias[oc] = Σ kernels::ChannelGradTerm, one block per channel
//   fill(x, count, value)
#pragma once

#include <algorithm>

#include "gpu/cuda_kernel_math_nn.hpp"

namespace dtsim::gpu::kernels {

// y = conv(x, w) (+ bias), the batch in chunks of `chunk` samples through `scratch` (chunk · col_size elements).
template <class Exec>
void conv2d_forward_plan(Exec& exec, const ConvGeometry& g, int batch, int chunk, const float* x, const float* w,
                         const float* bias, float* y, float* scratch) {
  const int taps = g.patch_size();
  const int positions = g.positions();
  for (int first = 0; first < batch; first += chunk) {
    const int samples = std::min(chunk, batch - first);
    exec.for_each(samples * g.col_size(), Im2colChunk{x, scratch, g, first}, "conv2d_forward im2col");
    // y_s (out_channels × positions) = w (out_channels × taps) · col_s (taps × positions), every s of the chunk.
    exec.gemm(Transpose::No, Transpose::No, g.out_channels, positions, taps, 1.0f, w, 0, scratch,
              static_cast<long long>(g.col_size()), 0.0f, y + first * g.output_size(),
              static_cast<long long>(g.output_size()), samples);
  }
  if (bias) {
    exec.for_each(batch * g.output_size(), AddChannelBiasElement{y, bias, g.out_channels, positions},
                  "conv2d_forward bias");
  }
}

// dw (overwritten) = Σ_s dy_s · col_sᵀ, one GEMM per sample so that the sum runs in sample order; dbias and dx
// when not null. Within a chunk the scratch first holds the im2col matrices, then the im2col gradients.
template <class Exec>
void conv2d_backward_plan(Exec& exec, const ConvGeometry& g, int batch, int chunk, const float* x, const float* w,
                          const float* dy, float* dx, float* dw, float* dbias, float* scratch) {
  const int taps = g.patch_size();
  const int positions = g.positions();
  if (dbias) exec.channel_grad_sums(dy, batch, g.out_channels, positions, dbias);
  if (batch == 0) {
    exec.fill(dw, static_cast<size_t>(g.out_channels) * taps, 0.0f);
    return;
  }
  for (int first = 0; first < batch; first += chunk) {
    const int samples = std::min(chunk, batch - first);
    exec.for_each(samples * g.col_size(), Im2colChunk{x, scratch, g, first}, "conv2d_backward im2col");
    // dw (+)= dy_s (out_channels × positions) · col_sᵀ (positions × taps); the very first sample overwrites.
    for (int s = 0; s < samples; ++s) {
      const float beta = first + s == 0 ? 0.0f : 1.0f;
      exec.gemm(Transpose::No, Transpose::Yes, g.out_channels, taps, positions, 1.0f,
                dy + (first + s) * g.output_size(), 0, scratch + s * g.col_size(), 0, beta, dw, 0, 1);
    }
    if (dx) {
      // dcol_s (taps × positions) = wᵀ (taps × out_channels) · dy_s (out_channels × positions), then col2im.
      exec.gemm(Transpose::Yes, Transpose::No, taps, positions, g.out_channels, 1.0f, w, 0,
                dy + first * g.output_size(), static_cast<long long>(g.output_size()), 0.0f, scratch,
                static_cast<long long>(g.col_size()), samples);
      exec.for_each(samples * g.input_size(), Col2imChunk{scratch, dx, g, first}, "conv2d_backward col2im");
    }
  }
}

}  // namespace dtsim::gpu::kernels
