// The compute interface every backend implements: a handful of dense ops on buffers that live in the
// backend's memory. Nothing here knows about layers, training or networks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dtsim::gpu {

// A dense row-major matrix view (leading dimension = cols). Views never own memory.
template <class T>
struct MatrixView {
  T* data = nullptr;
  int rows = 0;
  int cols = 0;
};

template <class T>
struct ConstMatrixView {
  const T* data = nullptr;
  int rows = 0;
  int cols = 0;
  ConstMatrixView() = default;
  ConstMatrixView(const T* d, int r, int c) : data(d), rows(r), cols(c) {}
  ConstMatrixView(MatrixView<T> m) : data(m.data), rows(m.rows), cols(m.cols) {}  // NOLINT: views convert freely
};

// Sum of per-row losses and number of rows whose arg-max matches the label.
struct LossSums {
  double loss = 0.0;
  int64_t correct = 0;
};

enum class Transpose { No, Yes };

template <class T>
class Ops {
 public:
  virtual ~Ops() = default;
  virtual std::string name() const = 0;

  // ---- memory (buffers of the backend; host memory for the CPU backend) -----------------------------------
  virtual T* allocate(size_t count) = 0;
  virtual void release(T* buffer) = 0;
  virtual void upload(T* dst, const T* host_src, size_t count) = 0;
  virtual void download(T* host_dst, const T* src, size_t count) = 0;
  virtual void copy(T* dst, const T* src, size_t count) = 0;
  virtual void fill(T* x, size_t count, T value) = 0;

  // ---- dense algebra ----------------------------------------------------------------------------------------
  // c = alpha · op(a) · op(b) + beta · c
  virtual void gemm(Transpose ta, Transpose tb, T alpha, ConstMatrixView<T> a, ConstMatrixView<T> b, T beta,
                    MatrixView<T> c) = 0;
  // y[r, :] += bias for every row r
  virtual void add_row_vector(MatrixView<T> y, const T* bias) = 0;
  // out = beta · out + (sum of x over rows), one value per column
  virtual void column_sums(ConstMatrixView<T> x, T beta, T* out) = 0;
  // y += alpha · x
  virtual void axpy(T alpha, const T* x, T* y, size_t count) = 0;
  // x *= alpha
  virtual void scale(T alpha, T* x, size_t count) = 0;
  // Σ x² accumulated in double, so reductions are exact enough for norms and tests
  virtual double sum_squares(const T* x, size_t count) = 0;

  // ---- activations (elementwise) -------------------------------------------------------------------------------
  virtual void relu_forward(const T* x, T* y, size_t count) = 0;
  // dx = dy where the forward output y was positive, else 0
  virtual void relu_backward(const T* y, const T* dy, T* dx, size_t count) = 0;

  // ---- loss ----------------------------------------------------------------------------------------------------
  // Softmax cross-entropy per row of `logits` against host-side `labels`. When `dlogits` is not null it
  // receives grad_scale · (softmax − onehot). Returns the summed loss and the arg-max hits.
  virtual LossSums softmax_cross_entropy(ConstMatrixView<T> logits, const int32_t* labels, T* dlogits,
                                         T grad_scale) = 0;

  // ---- optimizer updates (fused, elementwise) ----------------------------------------------------------------
  // Heavy-ball SGD with optional Nesterov and L2 weight decay, as in torch.optim.SGD (dampening 0):
  //   g' = g + wd·w;  v = μ·v + g';  w -= lr · (nesterov ? g' + μ·v : v)
  virtual void sgd_momentum_update(T* w, const T* g, T* v, size_t count, T lr, T momentum, T weight_decay,
                                   bool nesterov) = 0;
};

}  // namespace dtsim::gpu
