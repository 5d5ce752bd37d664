#include <cmath>

#include "gpu/cpu_ops.hpp"

namespace dtsim::gpu {

template <class T>
void CpuOps<T>::sgd_momentum_update(T* w, const T* g, T* v, size_t count, T lr, T momentum, T weight_decay,
                                    bool nesterov) {
  for (size_t i = 0; i < count; ++i) {
    const T grad = g[i] + weight_decay * w[i];
    v[i] = momentum * v[i] + grad;
    w[i] -= lr * (nesterov ? grad + momentum * v[i] : v[i]);
  }
}

template <class T>
void CpuOps<T>::adam_update(T* w, const T* g, T* m, T* v, size_t count, T lr, T beta1, T beta2, T eps,
                            T weight_decay, bool decoupled, T bias_correction1, T bias_correction2) {
  for (size_t i = 0; i < count; ++i) {
    T grad = g[i];
    if (decoupled) {
      w[i] *= T(1) - lr * weight_decay;
    } else {
      grad += weight_decay * w[i];
    }
    m[i] = beta1 * m[i] + (T(1) - beta1) * grad;
    v[i] = beta2 * v[i] + (T(1) - beta2) * grad * grad;
    w[i] -= lr * (m[i] / bias_correction1) / (std::sqrt(v[i] / bias_correction2) + eps);
  }
}

template <class T>
void CpuOps<T>::lamb_direction(const T* w, const T* g, T* m, T* v, T* u, size_t count, T beta1, T beta2, T eps,
                               T weight_decay, T bias_correction1, T bias_correction2) {
  for (size_t i = 0; i < count; ++i) {
    m[i] = beta1 * m[i] + (T(1) - beta1) * g[i];
    v[i] = beta2 * v[i] + (T(1) - beta2) * g[i] * g[i];
    u[i] = (m[i] / bias_correction1) / (std::sqrt(v[i] / bias_correction2) + eps) + weight_decay * w[i];
  }
}

// The class itself is instantiated in cpu_ops.cpp; here only the members defined in this file.
#define DTSIM_INSTANTIATE_OPTIM(T)                                                                           \
  template void CpuOps<T>::sgd_momentum_update(T*, const T*, T*, size_t, T, T, T, bool);                      \
  template void CpuOps<T>::adam_update(T*, const T*, T*, T*, size_t, T, T, T, T, T, bool, T, T);               \
  template void CpuOps<T>::lamb_direction(const T*, const T*, T*, T*, T*, size_t, T, T, T, T, T, T);
DTSIM_INSTANTIATE_OPTIM(float)
DTSIM_INSTANTIATE_OPTIM(double)

}  // namespace dtsim::gpu
