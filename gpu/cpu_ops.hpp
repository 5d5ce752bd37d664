// The CPU reference backend: plain loops and Eigen maps over host memory. It is the source of truth that
// the CUDA backend is tested against, so it favours clarity; the GEMMs go through Eigen for speed.
// The ops are split over four files: cpu_ops.cpp (memory, algebra, reductions, activations, loss, number
// formats), cpu_ops_nn.cpp (convolution, pooling, layer norm, embedding), cpu_ops_attention.cpp (multi-head
// self-attention) and cpu_ops_optim.cpp (fused optimizer updates).
#pragma once

#include "gpu/ops.hpp"

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

  double sum(const T* x, size_t count) override;
  double sum_squares(const T* x, size_t count) override;
  double dot(const T* x, const T* y, size_t count) override;
  size_t count_nonfinite(const T* x, size_t count) override;

  void relu_forward(const T* x, T* y, size_t count) override;
  void relu_backward(const T* y, const T* dy, T* dx, size_t count) override;
  void gelu_forward(const T* x, T* y, size_t count) override;
  void gelu_backward(const T* x, const T* dy, T* dx, size_t count) override;
  void tanh_forward(const T* x, T* y, size_t count) override;
  void tanh_backward(const T* y, const T* dy, T* dx, size_t count) override;

  LossSums softmax_cross_entropy(ConstMatrixView<T> logits, const int32_t* labels, T* dlogits,
                                 T grad_scale) override;

  size_t conv2d_scratch_size(const ConvShape& shape) override;
  void conv2d_forward(const ConvShape& shape, const T* x, const T* w, const T* bias, T* y, T* scratch) override;
  void conv2d_backward(const ConvShape& shape, const T* x, const T* w, const T* dy, T* dx, T* dw, T* dbias,
                       T* scratch) override;
  void max_pool_forward(const PoolShape& shape, const T* x, T* y) override;
  void max_pool_backward(const PoolShape& shape, const T* x, const T* y, const T* dy, T* dx) override;
  void avg_pool_forward(const PoolShape& shape, const T* x, T* y) override;
  void avg_pool_backward(const PoolShape& shape, const T* dy, T* dx) override;
  void layer_norm_forward(const T* x, const T* gamma, const T* beta, T* y, int rows, int cols, T eps) override;
  void layer_norm_backward(const T* x, const T* gamma, const T* dy, T* dx, T* dgamma, T* dbeta, int rows, int cols,
                           T eps) override;
  void embedding_forward(const T* ids, const T* table, T* out, int rows, int vocab, int dim) override;
  void embedding_backward(const T* ids, const T* dout, T* dtable, int rows, int vocab, int dim) override;

  void attention_forward(const AttentionShape& shape, const T* q, const T* k, const T* v, T* probs, T* out) override;
  void attention_backward(const AttentionShape& shape, const T* q, const T* k, const T* v, const T* probs,
                          const T* dout, T* dq, T* dk, T* dv) override;
  void rotary_embedding(const AttentionShape& shape, T* x, double base, bool inverse) override;

  void round_to_format(T* x, size_t count, NumberFormat format) override;

  void sgd_momentum_update(T* w, const T* g, T* v, size_t count, T lr, T momentum, T weight_decay,
                           bool nesterov) override;
  void adam_update(T* w, const T* g, T* m, T* v, size_t count, T lr, T beta1, T beta2, T eps, T weight_decay,
                   bool decoupled, T bias_correction1, T bias_correction2) override;
  void lamb_direction(const T* w, const T* g, T* m, T* v, T* u, size_t count, T beta1, T beta2, T eps,
                      T weight_decay, T bias_correction1, T bias_correction2) override;
};

extern template class CpuOps<float>;
extern template class CpuOps<double>;

}  // namespace dtsim::gpu
