// Convolution, pooling, layer norm and embedding for the CPU reference backend.
#include <stdexcept>

#include "gpu/cpu_ops.hpp"

namespace dtsim::gpu {
namespace {
[[noreturn]] void not_yet(const char* op) { throw std::logic_error(std::string("cpu backend: ") + op + " is not implemented yet"); }
}  // namespace

template <class T>
size_t CpuOps<T>::conv2d_scratch_size(const ConvShape&) { not_yet("conv2d"); }
template <class T>
void CpuOps<T>::conv2d_forward(const ConvShape&, const T*, const T*, const T*, T*, T*) { not_yet("conv2d"); }
template <class T>
void CpuOps<T>::conv2d_backward(const ConvShape&, const T*, const T*, const T*, T*, T*, T*, T*) { not_yet("conv2d"); }
template <class T>
void CpuOps<T>::max_pool_forward(const PoolShape&, const T*, T*) { not_yet("max_pool"); }
template <class T>
void CpuOps<T>::max_pool_backward(const PoolShape&, const T*, const T*, const T*, T*) { not_yet("max_pool"); }
template <class T>
void CpuOps<T>::avg_pool_forward(const PoolShape&, const T*, T*) { not_yet("avg_pool"); }
template <class T>
void CpuOps<T>::avg_pool_backward(const PoolShape&, const T*, T*) { not_yet("avg_pool"); }
template <class T>
void CpuOps<T>::layer_norm_forward(const T*, const T*, const T*, T*, int, int, T) { not_yet("layer_norm"); }
template <class T>
void CpuOps<T>::layer_norm_backward(const T*, const T*, const T*, T*, T*, T*, int, int, T) { not_yet("layer_norm"); }
template <class T>
void CpuOps<T>::embedding_forward(const T*, const T*, T*, int, int, int) { not_yet("embedding"); }
template <class T>
void CpuOps<T>::embedding_backward(const T*, const T*, T*, int, int, int) { not_yet("embedding"); }

// The class itself is instantiated in cpu_ops.cpp; here only the members defined in this file.
#define DTSIM_INSTANTIATE_NN(T)                                                                              \
  template size_t CpuOps<T>::conv2d_scratch_size(const ConvShape&);                                          \
  template void CpuOps<T>::conv2d_forward(const ConvShape&, const T*, const T*, const T*, T*, T*);            \
  template void CpuOps<T>::conv2d_backward(const ConvShape&, const T*, const T*, const T*, T*, T*, T*, T*);   \
  template void CpuOps<T>::max_pool_forward(const PoolShape&, const T*, T*);                                 \
  template void CpuOps<T>::max_pool_backward(const PoolShape&, const T*, const T*, const T*, T*);            \
  template void CpuOps<T>::avg_pool_forward(const PoolShape&, const T*, T*);                                 \
  template void CpuOps<T>::avg_pool_backward(const PoolShape&, const T*, T*);                                \
  template void CpuOps<T>::layer_norm_forward(const T*, const T*, const T*, T*, int, int, T);                \
  template void CpuOps<T>::layer_norm_backward(const T*, const T*, const T*, T*, T*, T*, int, int, T);       \
  template void CpuOps<T>::embedding_forward(const T*, const T*, T*, int, int, int);                         \
  template void CpuOps<T>::embedding_backward(const T*, const T*, T*, int, int, int);
DTSIM_INSTANTIATE_NN(float)
DTSIM_INSTANTIATE_NN(double)

}  // namespace dtsim::gpu
