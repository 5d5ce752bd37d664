// The compute interface every backend implements: dense ops on buffers that live in the backend's memory
// (host memory for the CPU reference, device memory for CUDA). Nothing here knows about layers, training or
// networks. Each op's comment is its contract: the CPU and CUDA backends must agree on it to fp32 rounding.
//
// Conventions:
// - Matrices are row-major. A batch of samples is a matrix with one sample per row.
// - Image tensors are NCHW: sample-major, then channel, then row, then column.
// - "Overwrites" means the output's previous content is ignored; "accumulates" means it is added to.
// - Ops never allocate device memory behind the caller's back except where noted (scratch is passed in).
// - Reductions return double and are computed in a fixed order, so results do not depend on scheduling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpu/number_format.hpp"

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

// The sizes of C = op(A) · op(B): op(A) is m × k, op(B) is k × n. `matches` says whether B's inner size and C's
// shape agree with them (both backends reject a GEMM that does not).
struct GemmSizes {
  int m = 0, n = 0, k = 0;
  bool matches = false;
};
template <class T>
GemmSizes gemm_sizes(Transpose ta, Transpose tb, ConstMatrixView<T> a, ConstMatrixView<T> b, MatrixView<T> c) {
  const bool at = ta == Transpose::Yes, bt = tb == Transpose::Yes;
  GemmSizes g;
  g.m = at ? a.cols : a.rows;
  g.k = at ? a.rows : a.cols;
  g.n = bt ? b.rows : b.cols;
  g.matches = (bt ? b.cols : b.rows) == g.k && c.rows == g.m && c.cols == g.n;
  return g;
}

// A 2-D convolution over NCHW input: `batch` samples of in_channels × height × width, a kernel of
// out_channels × in_channels × kernel_h × kernel_w (stored in that order, row-major), zero padding `pad` on
// every side and stride `stride`. Output: batch × out_channels × out_h × out_w.
struct ConvShape {
  int batch = 0;
  int in_channels = 0;
  int height = 0;
  int width = 0;
  int out_channels = 0;
  int kernel_h = 0;
  int kernel_w = 0;
  int stride = 1;
  int pad = 0;
  int out_h() const { return (height + 2 * pad - kernel_h) / stride + 1; }
  int out_w() const { return (width + 2 * pad - kernel_w) / stride + 1; }
  // Length of one im2col column: in_channels × kernel_h × kernel_w.
  int patch_size() const { return in_channels * kernel_h * kernel_w; }
};

// Pooling over NCHW input with square windows, no padding: output is
// batch × channels × ((height − kernel)/stride + 1) × ((width − kernel)/stride + 1).
struct PoolShape {
  int batch = 0;
  int channels = 0;
  int height = 0;
  int width = 0;
  int kernel = 2;
  int stride = 2;
  int out_h() const { return (height - kernel) / stride + 1; }
  int out_w() const { return (width - kernel) / stride + 1; }
};

// Multi-head self-attention over `batch` sequences of `seq` tokens: `heads` heads of `head_dim` values each
// (dim = heads · head_dim). Query i of sequence b sees key j when j < key_lengths[b] (all `seq` keys when
// key_lengths is null) and, with `causal`, j <= i.
struct AttentionShape {
  int batch = 0;
  int seq = 0;
  int heads = 0;
  int head_dim = 0;
  bool causal = false;
  const int32_t* key_lengths = nullptr;  // host memory, `batch` values in [0, seq]; null: every key is valid
  int dim() const { return heads * head_dim; }
};

template <class T>
class Ops {
 public:
  virtual ~Ops() = default;
  virtual std::string name() const = 0;  // "cpu", "cuda"

  // ---- memory ---------------------------------------------------------------------------------------------
  // allocate: `count` elements, uninitialised. Throws std::runtime_error (naming the size) when out of memory.
  virtual T* allocate(size_t count) = 0;
  virtual void release(T* buffer) = 0;
  virtual void upload(T* dst, const T* host_src, size_t count) = 0;
  virtual void download(T* host_dst, const T* src, size_t count) = 0;
  virtual void copy(T* dst, const T* src, size_t count) = 0;  // within backend memory; may overlap
  virtual void fill(T* x, size_t count, T value) = 0;

  // ---- dense algebra ----------------------------------------------------------------------------------------
  // c = alpha · op(a) · op(b) + beta · c. With beta = 0, c's previous content (even NaN) is ignored.
  virtual void gemm(Transpose ta, Transpose tb, T alpha, ConstMatrixView<T> a, ConstMatrixView<T> b, T beta,
                    MatrixView<T> c) = 0;
  // y[r, :] += bias for every row r
  virtual void add_row_vector(MatrixView<T> y, const T* bias) = 0;
  // out[j] = beta · out[j] + Σ_r x[r, j]   (beta = 0 ignores out's previous content)
  virtual void column_sums(ConstMatrixView<T> x, T beta, T* out) = 0;
  virtual void axpy(T alpha, const T* x, T* y, size_t count) = 0;  // y += alpha · x
  virtual void scale(T alpha, T* x, size_t count) = 0;             // x *= alpha

  // ---- reductions (accumulated in double) -------------------------------------------------------------------
  virtual double sum(const T* x, size_t count) = 0;
  virtual double sum_squares(const T* x, size_t count) = 0;
  virtual double dot(const T* x, const T* y, size_t count) = 0;
  virtual size_t count_nonfinite(const T* x, size_t count) = 0;  // NaN and ±inf

  // ---- activations (elementwise) ----------------------------------------------------------------------------
  virtual void relu_forward(const T* x, T* y, size_t count) = 0;
  // dx = dy where the forward output y is > 0, else 0
  virtual void relu_backward(const T* y, const T* dy, T* dx, size_t count) = 0;
  // y = x · Φ(x) with the exact Gaussian CDF Φ(x) = ½(1 + erf(x/√2)) (PyTorch's default GELU)
  virtual void gelu_forward(const T* x, T* y, size_t count) = 0;
  // dx = dy · (Φ(x) + x · φ(x)), φ the standard normal density; needs the forward *input* x
  virtual void gelu_backward(const T* x, const T* dy, T* dx, size_t count) = 0;
  virtual void tanh_forward(const T* x, T* y, size_t count) = 0;
  // dx = dy · (1 − y²); needs the forward *output* y
  virtual void tanh_backward(const T* y, const T* dy, T* dx, size_t count) = 0;

  // ---- loss -------------------------------------------------------------------------------------------------
  // Softmax cross-entropy per row of `logits` against host-side `labels` (the backend copies them if it
  // needs to). When `dlogits` is not null it is overwritten with grad_scale · (softmax − onehot). Returns
  // the summed loss and the number of rows whose first arg-max equals the label. Throws
  // std::invalid_argument for a label outside [0, cols).
  virtual LossSums softmax_cross_entropy(ConstMatrixView<T> logits, const int32_t* labels, T* dlogits,
                                         T grad_scale) = 0;

  // ---- convolution (im2col + GEMM) --------------------------------------------------------------------------
  // Elements of scratch the conv ops below need for `shape` (backend specific; at least one sample's
  // im2col matrix, patch_size × out_h × out_w).
  virtual size_t conv2d_scratch_size(const ConvShape& shape) = 0;
  // y (overwrites) = conv(x, w) + bias; bias may be null.
  virtual void conv2d_forward(const ConvShape& shape, const T* x, const T* w, const T* bias, T* y, T* scratch) = 0;
  // Overwrites dw (out_channels × patch_size) with Σ over the batch, dbias (out_channels; may be null) with
  // Σ over batch and positions, and dx (may be null; shape of x) with the input gradient.
  virtual void conv2d_backward(const ConvShape& shape, const T* x, const T* w, const T* dy, T* dx, T* dw, T* dbias,
                               T* scratch) = 0;

  // ---- pooling ----------------------------------------------------------------------------------------------
  // y (overwrites) = max over each window.
  virtual void max_pool_forward(const PoolShape& shape, const T* x, T* y) = 0;
  // dx (overwrites, zero elsewhere) receives each window's dy at the window's first maximum in row-major
  // scan order (the position whose x equals the forward output y). Overlapping windows accumulate.
  virtual void max_pool_backward(const PoolShape& shape, const T* x, const T* y, const T* dy, T* dx) = 0;
  // y (overwrites) = mean over each window (kernel² values).
  virtual void avg_pool_forward(const PoolShape& shape, const T* x, T* y) = 0;
  // dx (overwrites) = Σ over the windows covering a position of dy / kernel².
  virtual void avg_pool_backward(const PoolShape& shape, const T* dy, T* dx) = 0;

  // ---- layer norm -------------------------------------------------------------------------------------------
  // Per row of `rows` × `cols`: y = (x − mean) / sqrt(var + eps) · gamma + beta, var the biased variance.
  virtual void layer_norm_forward(const T* x, const T* gamma, const T* beta, T* y, int rows, int cols, T eps) = 0;
  // Overwrites dx, and dgamma and dbeta (Σ over rows); recomputes the statistics from x.
  virtual void layer_norm_backward(const T* x, const T* gamma, const T* dy, T* dx, T* dgamma, T* dbeta, int rows,
                                   int cols, T eps) = 0;

  // ---- embedding --------------------------------------------------------------------------------------------
  // out[r, :] (overwrites) = table[ids[r], :], with ids stored as integral values of T in backend memory.
  // An id outside [0, vocab) yields a zero row.
  virtual void embedding_forward(const T* ids, const T* table, T* out, int rows, int vocab, int dim) = 0;
  // dtable (overwrites, vocab × dim) = Σ over rows r with ids[r] = v of dout[r, :], summed in row order.
  virtual void embedding_backward(const T* ids, const T* dout, T* dtable, int rows, int vocab, int dim) = 0;

  // ---- attention --------------------------------------------------------------------------------------------
  // q, k, v, out: (batch·seq) × dim row-major; head h uses columns [h·head_dim, (h+1)·head_dim).
  // probs (overwrites): batch × heads × seq × seq, row (b, h, i) = softmax over visible keys j of
  // q_i·k_j / sqrt(head_dim), exactly 0 at masked keys. out (overwrites) = probs · v per head. A query that sees
  // no key (key length 0) gets an all-zero probs row and output row.
  virtual void attention_forward(const AttentionShape& shape, const T* q, const T* k, const T* v, T* probs, T* out) = 0;
  // Overwrites dq, dk and dv with the gradients of the loss given dout, using the forward's probs.
  virtual void attention_backward(const AttentionShape& shape, const T* q, const T* k, const T* v, const T* probs,
                                  const T* dout, T* dq, T* dk, T* dv) = 0;
  // Rotary position embedding (RoFormer, Su et al. 2021), in place on a (batch·seq) × dim matrix of queries or
  // keys: within each head, the pair (x[2m], x[2m+1]) of token t (t counted from its sequence's start) turns by
  // the angle t · base^(−2m/head_dim), or by its negative with `inverse`. A query at i and a key at j then score by
  // their offset i − j alone, which is what lets attention find "the token before me" at every position. The
  // rotation is orthogonal, so the inverse rotation of the rotated values' gradient is the input's gradient.
  // Needs an even head_dim; masks and key lengths play no part.
  virtual void rotary_embedding(const AttentionShape& shape, T* x, double base, bool inverse) = 0;

  // ---- number formats ---------------------------------------------------------------------------------------
  // Rounds every value to the nearest value of `format` (ties to even, overflow to ±inf, gradual underflow,
  // NaN stays NaN), keeping it stored as T: the emulation of storing a tensor in bf16 or fp16.
  virtual void round_to_format(T* x, size_t count, NumberFormat format) = 0;

  // ---- optimizer updates (fused, elementwise) ----------------------------------------------------------------
  // Heavy-ball SGD with optional Nesterov and L2 weight decay, as in torch.optim.SGD (dampening 0):
  //   g' = g + wd·w;  v = μ·v + g';  w -= lr · (nesterov ? g' + μ·v : v)
  virtual void sgd_momentum_update(T* w, const T* g, T* v, size_t count, T lr, T momentum, T weight_decay,
                                   bool nesterov) = 0;
  // Adam (torch.optim.Adam, L2 decay folded into the gradient) or, with `decoupled`, AdamW
  // (torch.optim.AdamW: w *= 1 − lr·wd first). With bc1 = 1 − β1^t and bc2 = 1 − β2^t:
  //   g' = g (+ wd·w unless decoupled);  m = β1·m + (1−β1)·g';  v = β2·v + (1−β2)·g'²
  //   w -= lr · (m / bc1) / (sqrt(v / bc2) + eps)
  virtual void adam_update(T* w, const T* g, T* m, T* v, size_t count, T lr, T beta1, T beta2, T eps,
                           T weight_decay, bool decoupled, T bias_correction1, T bias_correction2) = 0;
  // The LAMB direction (You et al., 2020): updates m and v as Adam does (on g, no decay), then overwrites
  //   u = (m / bc1) / (sqrt(v / bc2) + eps) + wd · w
  // The caller scales u by the layer's trust ratio ‖w‖/‖u‖ and applies it.
  virtual void lamb_direction(const T* w, const T* g, T* m, T* v, T* u, size_t count, T beta1, T beta2, T eps,
                              T weight_decay, T bias_correction1, T bias_correction2) = 0;
};

}  // namespace dtsim::gpu
