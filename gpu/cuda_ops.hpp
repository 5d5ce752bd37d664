// The CUDA backend: buffers in device memory, GEMMs through cuBLAS in full FP32 (no TF32), everything else in
// our own kernels. It implements every op of gpu/ops.hpp to the contract, agreeing with CpuOps<float> to fp32
// rounding; reductions are deterministic (fixed launch configuration, per-block partials folded by one block, no
// floating-point atomics). Calls are synchronous in effect: all work goes to the default stream, and every op that
// returns a value to the host waits for it.
//
// The ops are split by family: cuda_ops.cu (lifetime, memory, GEMM and dense algebra), cuda_ops_elementwise.cu
// (activations, number formats, optimizer updates), cuda_ops_reduce.cu (reductions, softmax cross-entropy),
// cuda_ops_conv.cu (convolution), cuda_ops_nn.cu (pooling, layer norm, embedding) and cuda_ops_attention.cu
// (multi-head self-attention). What each thread computes is in cuda_kernel_math.hpp, cuda_kernel_math_nn.hpp and
// cuda_kernel_math_attention.hpp (which also holds the attention's sequence of kernels), the convolution's
// sequence of steps in cuda_conv_plan.hpp, and the launch and error-checking helpers in cuda_support.cuh.
//
// One CudaOps per process: the constructor makes its device current, and the object is not thread-safe (the ops
// share one workspace).
//
// This header includes no CUDA header, so plain C++ code can hold a CudaOps. It exists only in builds with CUDA
// (DTSIM_HAVE_CUDA); use gpu/backend.hpp to choose a backend at run time.
#pragma once

#include <cstddef>
#include <string>

#include "gpu/ops.hpp"

struct cublasContext;  // cuBLAS's handle type is cublasContext*

namespace dtsim::gpu {

class CudaOps final : public Ops<float> {
 public:
  // Binds to `device` and creates the cuBLAS handle. Throws std::runtime_error when either fails (no driver, no
  // such device), naming the call and CUDA's reason.
  explicit CudaOps(int device = 0);
  ~CudaOps() override;
  CudaOps(const CudaOps&) = delete;
  CudaOps& operator=(const CudaOps&) = delete;

  std::string name() const override { return "cuda"; }
  int device() const { return device_; }
  const std::string& device_name() const { return device_name_; }
  // Waits for all queued work and reports any fault that happened while a kernel ran.
  void synchronize();

  // Caps the scratch that conv2d_scratch_size asks for, in elements (default kDefaultConvScratchLimit): the
  // batch is processed in chunks whose im2col matrices fit. One sample's matrix is the minimum whatever the cap.
  static constexpr size_t kDefaultConvScratchLimit = size_t{32} << 20;  // 128 MiB of floats
  void set_conv_scratch_limit(size_t elements) { conv_scratch_limit_ = elements; }

  // Row-major c_i = alpha · op(a_i) · op(b_i) + beta · c_i for i < batch, with op(a) m × k, op(b) k × n and
  // consecutive matrices `stride_*` elements apart (0 for a or b: the same matrix for every i; c's stride must not
  // be 0 when batch > 1). Leading dimensions are the row lengths of the matrices as stored. beta = 0 ignores c.
  void gemm_strided_batched(Transpose ta, Transpose tb, int m, int n, int k, float alpha, const float* a,
                            long long stride_a, const float* b, long long stride_b, float beta, float* c,
                            long long stride_c, int batch);

  // ---- Ops<float> -------------------------------------------------------------------------------------------
  float* allocate(size_t count) override;
  // Never throws (it runs in destructors); freeing a pointer that allocate did not return is a caller bug whose
  // error is discarded.
  void release(float* buffer) override;
  void upload(float* dst, const float* host_src, size_t count) override;
  void download(float* host_dst, const float* src, size_t count) override;
  void copy(float* dst, const float* src, size_t count) override;
  void fill(float* x, size_t count, float value) override;

  void gemm(Transpose ta, Transpose tb, float alpha, ConstMatrixView<float> a, ConstMatrixView<float> b, float beta,
            MatrixView<float> c) override;
  void add_row_vector(MatrixView<float> y, const float* bias) override;
  void column_sums(ConstMatrixView<float> x, float beta, float* out) override;
  void axpy(float alpha, const float* x, float* y, size_t count) override;
  void scale(float alpha, float* x, size_t count) override;

  double sum(const float* x, size_t count) override;
  double sum_squares(const float* x, size_t count) override;
  double dot(const float* x, const float* y, size_t count) override;
  size_t count_nonfinite(const float* x, size_t count) override;

  void relu_forward(const float* x, float* y, size_t count) override;
  void relu_backward(const float* y, const float* dy, float* dx, size_t count) override;
  void gelu_forward(const float* x, float* y, size_t count) override;
  void gelu_backward(const float* x, const float* dy, float* dx, size_t count) override;
  void tanh_forward(const float* x, float* y, size_t count) override;
  void tanh_backward(const float* y, const float* dy, float* dx, size_t count) override;

  LossSums softmax_cross_entropy(ConstMatrixView<float> logits, const int32_t* labels, float* dlogits,
                                 float grad_scale) override;

  size_t conv2d_scratch_size(const ConvShape& shape) override;
  void conv2d_forward(const ConvShape& shape, const float* x, const float* w, const float* bias, float* y,
                      float* scratch) override;
  void conv2d_backward(const ConvShape& shape, const float* x, const float* w, const float* dy, float* dx, float* dw,
                       float* dbias, float* scratch) override;
  void max_pool_forward(const PoolShape& shape, const float* x, float* y) override;
  void max_pool_backward(const PoolShape& shape, const float* x, const float* y, const float* dy, float* dx) override;
  void avg_pool_forward(const PoolShape& shape, const float* x, float* y) override;
  void avg_pool_backward(const PoolShape& shape, const float* dy, float* dx) override;
  void layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y, int rows, int cols,
                          float eps) override;
  void layer_norm_backward(const float* x, const float* gamma, const float* dy, float* dx, float* dgamma, float* dbeta,
                           int rows, int cols, float eps) override;
  void embedding_forward(const float* ids, const float* table, float* out, int rows, int vocab, int dim) override;
  void embedding_backward(const float* ids, const float* dout, float* dtable, int rows, int vocab, int dim) override;

  void attention_forward(const AttentionShape& shape, const float* q, const float* k, const float* v, float* probs,
                         float* out) override;
  void attention_backward(const AttentionShape& shape, const float* q, const float* k, const float* v,
                          const float* probs, const float* dout, float* dq, float* dk, float* dv) override;
  void rotary_embedding(const AttentionShape& shape, float* x, double base, bool inverse) override;

  void round_to_format(float* x, size_t count, NumberFormat format) override;

  void sgd_momentum_update(float* w, const float* g, float* v, size_t count, float lr, float momentum,
                           float weight_decay, bool nesterov) override;
  void adam_update(float* w, const float* g, float* m, float* v, size_t count, float lr, float beta1, float beta2,
                   float eps, float weight_decay, bool decoupled, float bias_correction1,
                   float bias_correction2) override;
  void lamb_direction(const float* w, const float* g, float* m, float* v, float* u, size_t count, float beta1,
                      float beta2, float eps, float weight_decay, float bias_correction1,
                      float bias_correction2) override;

 private:
  // Device memory of at least `bytes`, owned by this object and reused by every op that needs room of its own
  // (uploaded labels, per-row results, reduction partials, the embedding's row grouping, the attention's key
  // lengths and score gradients). The ops run in order on one stream, so one op's use cannot overlap another's.
  // Contents do not survive between ops.
  void* workspace(size_t bytes);

  int device_ = 0;
  std::string device_name_;
  cublasContext* cublas_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  size_t conv_scratch_limit_ = kDefaultConvScratchLimit;
};

}  // namespace dtsim::gpu
