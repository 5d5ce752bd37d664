// The CPU reference backend: plain loops and Eigen maps over host memory. It is the source of truth that
// the CUDA backend is tested against, so it favours clarity; the GEMM goes through Eigen for speed.
#pragma once

#include "ops.hpp"

namespace dtsim::gpu {

template <class T>
class CpuOps final : public Ops<T> {
 public:
  std::string name() const override { return "cpu"; }

  T* allocate(size_t count) override;
  void release(T* buffer) override;
  void upload(T* dst, const T* host_src, size_t count) override;
  void download(T* host_dst, const T* src, size_t count) override;
  void copy(T* dst, const T* src, size_t count) override;
  void fill(T* x, size_t count, T value) override;

  void gemm(Transpose ta, Transpose tb, T alpha, ConstMatrixView<T> a, ConstMatrixView<T> b, T beta,
            MatrixView<T> c) override;
  void add_row_vector(MatrixView<T> y, const T* bias) override;
  void column_sums(ConstMatrixView<T> x, T beta, T* out) override;
  void axpy(T alpha, const T* x, T* y, size_t count) override;
  void scale(T alpha, T* x, size_t count) override;
  double sum_squares(const T* x, size_t count) override;

  void relu_forward(const T* x, T* y, size_t count) override;
  void relu_backward(const T* y, const T* dy, T* dx, size_t count) override;

  LossSums softmax_cross_entropy(ConstMatrixView<T> logits, const int32_t* labels, T* dlogits,
                                 T grad_scale) override;

  void sgd_momentum_update(T* w, const T* g, T* v, size_t count, T lr, T momentum, T weight_decay,
                           bool nesterov) override;
};

extern template class CpuOps<float>;
extern template class CpuOps<double>;

}  // namespace dtsim::gpu
