// CudaOps: activations, number-format rounding and the fused optimizer updates. Each is one grid-stride kernel
// over a functor from cuda_kernel_math.hpp.
#include "gpu/cuda_ops.hpp"
#include "gpu/cuda_support.cuh"

namespace dtsim::gpu {

using cuda_detail::launch_for_each;

void CudaOps::relu_forward(const float* x, float* y, size_t count) {
  launch_for_each(count, kernels::ReluForwardElement{x, y}, "relu_forward kernel launch");
}

void CudaOps::relu_backward(const float* y, const float* dy, float* dx, size_t count) {
  launch_for_each(count, kernels::ReluBackwardElement{y, dy, dx}, "relu_backward kernel launch");
}

void CudaOps::gelu_forward(const float* x, float* y, size_t count) {
  launch_for_each(count, kernels::GeluForwardElement{x, y}, "gelu_forward kernel launch");
}

void CudaOps::gelu_backward(const float* x, const float* dy, float* dx, size_t count) {
  launch_for_each(count, kernels::GeluBackwardElement{x, dy, dx}, "gelu_backward kernel launch");
}

void CudaOps::tanh_forward(const float* x, float* y, size_t count) {
  launch_for_each(count, kernels::TanhForwardElement{x, y}, "tanh_forward kernel launch");
}

void CudaOps::tanh_backward(const float* y, const float* dy, float* dx, size_t count) {
  launch_for_each(count, kernels::TanhBackwardElement{y, dy, dx}, "tanh_backward kernel launch");
}

void CudaOps::round_to_format(float* x, size_t count, NumberFormat format) {
  if (format == NumberFormat::Fp32) return;
  launch_for_each(count, kernels::RoundToFormatElement{x, format}, "round_to_format kernel launch");
}

void CudaOps::sgd_momentum_update(float* w, const float* g, float* v, size_t count, float lr, float momentum,
                                  float weight_decay, bool nesterov) {
  launch_for_each(count, kernels::SgdMomentumElement{w, g, v, lr, momentum, weight_decay, nesterov},
                  "sgd_momentum_update kernel launch");
}

void CudaOps::adam_update(float* w, const float* g, float* m, float* v, size_t count, float lr, float beta1,
                          float beta2, float eps, float weight_decay, bool decoupled, float bias_correction1,
                          float bias_correction2) {
  launch_for_each(count,
                  kernels::AdamElement{w, g, m, v, lr, beta1, beta2, eps, weight_decay, decoupled, bias_correction1,
                                       bias_correction2},
                  "adam_update kernel launch");
}

void CudaOps::lamb_direction(const float* w, const float* g, float* m, float* v, float* u, size_t count, float beta1,
                             float beta2, float eps, float weight_decay, float bias_correction1,
                             float bias_correction2) {
  launch_for_each(count,
                  kernels::LambDirectionElement{w, g, m, v, u, beta1, beta2, eps, weight_decay, bias_correction1,
                                                bias_correction2},
                  "lamb_direction kernel launch");
}

}  // namespace dtsim::gpu
