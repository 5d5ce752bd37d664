// Runs the CUDA backend's per-thread logic (gpu/cuda_kernel_math*.hpp, gpu/cuda_conv_plan.hpp) on the host,
// in the same decomposition as the kernels: every index of an elementwise kernel, every thread of a block with the
// same strided slices and the same reduction tree, and cuBLAS calls replaced by a GEMM written from cuBLAS's
// column-major definition. What differs from the device is only who executes it.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "gpu/cuda_conv_plan.hpp"
#include "gpu/cuda_kernel_math.hpp"
#include "gpu/cuda_kernel_math_nn.hpp"
#include "gpu/ops.hpp"

namespace dtsim::gpu::host_emulation {

using namespace dtsim::gpu::kernels;  // NOLINT: the emulation reads like the kernels it mirrors

template <class Op>
void run_every_index(size_t count, const Op& op) {
  for (size_t i = 0; i < count; ++i) op(i);
}

// cuda_detail::block_reduce, one thread at a time: the same levels, the same pairs.
template <class T, class Combine>
T block_reduce(std::vector<T> values, Combine combine) {
  for (int stride = static_cast<int>(values.size()) / 2; stride > 0; stride /= 2)
    for (int tid = 0; tid < stride; ++tid) tree_fold(values.data(), tid, stride, combine);
  return values[0];
}

// A block of `threads` threads where thread t contributes partial(t).
template <class T, class Partial>
T block_of(int threads, Partial partial) {
  std::vector<T> values(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) values[t] = partial(t);
  return block_reduce(values, Add{});
}

// The two passes of cuda_ops_reduce.cu's reduce(): reduce_blocks(count) blocks of kReduceThreads, then one block.
template <class Term>
typename Term::Acc reduce(Term term, size_t count) {
  using Acc = typename Term::Acc;
  if (count == 0) return Acc{0};
  const int blocks = reduce_blocks(count);
  const size_t step = static_cast<size_t>(blocks) * kReduceThreads;
  std::vector<Acc> partials(static_cast<size_t>(blocks));
  for (int b = 0; b < blocks; ++b)
    partials[b] = block_of<Acc>(kReduceThreads, [&](int t) {
      return strided_sum(term, count, static_cast<size_t>(b) * kReduceThreads + t, step);
    });
  return block_of<Acc>(kReduceThreads, [&](int t) {
    return strided_sum(PartialTerm<Acc>{partials.data()}, partials.size(), static_cast<size_t>(t), kReduceThreads);
  });
}

// cublasSgemmStridedBatched by its definition: column-major, C = alpha·op(A)·op(B) + beta·C, beta = 0 ignoring C.
inline void column_major_sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
                               long long stride_a, const float* b, int ldb, long long stride_b, float beta, float* c,
                               int ldc, long long stride_c, int batch) {
  for (int i = 0; i < batch; ++i) {
    const float* ai = a + i * stride_a;
    const float* bi = b + i * stride_b;
    float* ci = c + i * stride_c;
    for (int col = 0; col < n; ++col)
      for (int row = 0; row < m; ++row) {
        double acc = 0.0;
        for (int p = 0; p < k; ++p) {
          const float av = ta ? ai[p + static_cast<size_t>(row) * lda] : ai[row + static_cast<size_t>(p) * lda];
          const float bv = tb ? bi[col + static_cast<size_t>(p) * ldb] : bi[p + static_cast<size_t>(col) * ldb];
          acc += static_cast<double>(av) * bv;
        }
        float& out = ci[row + static_cast<size_t>(col) * ldc];
        out = beta == 0.0f ? static_cast<float>(alpha * acc) : static_cast<float>(alpha * acc + beta * out);
      }
  }
}

// CudaOps::gemm_strided_batched with cuBLAS replaced by the definition above.
inline void gemm_strided_batched(Transpose ta, Transpose tb, int m, int n, int k, float alpha, const float* a,
                                 long long stride_a, const float* b, long long stride_b, float beta, float* c,
                                 long long stride_c, int batch) {
  const ColumnMajorGemm cm = column_major_gemm(ta == Transpose::Yes, tb == Transpose::Yes, m, n, k);
  column_major_sgemm(cm.transpose_first, cm.transpose_second, cm.m, cm.n, cm.k, alpha, b, cm.ld_first, stride_b, a,
                     cm.ld_second, stride_a, beta, c, cm.ld_out, stride_c, batch);
}

// The executor of cuda_conv_plan.hpp on the host.
struct HostExec {
  template <class Op>
  void for_each(size_t count, const Op& op, const char* /*name*/) {
    run_every_index(count, op);
  }
  void gemm(Transpose ta, Transpose tb, int m, int n, int k, float alpha, const float* a, long long stride_a,
            const float* b, long long stride_b, float beta, float* c, long long stride_c, int batch) {
    gemm_strided_batched(ta, tb, m, n, k, alpha, a, stride_a, b, stride_b, beta, c, stride_c, batch);
  }
  void channel_grad_sums(const float* dy, int batch, int out_channels, int positions, float* dbias) {
    const size_t count = static_cast<size_t>(batch) * positions;
    for (int oc = 0; oc < out_channels; ++oc) {
      const ChannelGradTerm term{dy, out_channels, positions, oc};
      dbias[oc] = static_cast<float>(block_of<double>(kRowThreads, [&](int t) {
        return strided_sum(term, count, static_cast<size_t>(t), kRowThreads);
      }));
    }
  }
  void fill(float* x, size_t count, float value) { run_every_index(count, FillElement{x, value}); }
};

// The body of softmax_xent_rows for every row (cuda_ops_reduce.cu), then the host-side sum in row order.
inline LossSums softmax_cross_entropy(const float* logits, int rows, int cols, const int* labels, float* dlogits,
                                      float grad_scale) {
  LossSums sums;
  for (int r = 0; r < rows; ++r) {
    const float* z = logits + static_cast<size_t>(r) * cols;
    std::vector<ArgMax> candidates(kRowThreads);
    for (int t = 0; t < kRowThreads; ++t) candidates[t] = strided_argmax(z, cols, t, kRowThreads);
    const int argmax = finish_argmax(z, block_reduce(candidates, BetterArgMax{}));
    const float zmax = z[argmax];
    const double denom =
        block_of<double>(kRowThreads, [&](int t) { return strided_exp_sum(z, cols, zmax, t, kRowThreads); });
    const double log_denom = std::log(denom);
    sums.loss += softmax_xent_loss(z[labels[r]], zmax, log_denom);
    sums.correct += argmax == labels[r] ? 1 : 0;
    if (dlogits)
      for (int j = 0; j < cols; ++j)
        dlogits[static_cast<size_t>(r) * cols + j] = softmax_xent_grad(z[j], zmax, log_denom, j == labels[r], grad_scale);
  }
  return sums;
}

// block_row_stats of cuda_ops_nn.cu.
inline RowStats row_stats_of(const float* x, int cols, float eps) {
  const double mean =
      row_mean(block_of<double>(kRowThreads, [&](int t) { return strided_row_sum(x, cols, t, kRowThreads); }), cols);
  const double squares =
      block_of<double>(kRowThreads, [&](int t) { return strided_centered_squares(x, cols, mean, t, kRowThreads); });
  return row_stats(mean, squares, cols, eps);
}

inline void layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y, int rows, int cols,
                               float eps) {
  for (int r = 0; r < rows; ++r) {
    const size_t o = static_cast<size_t>(r) * cols;
    const RowStats s = row_stats_of(x + o, cols, eps);
    for (int j = 0; j < cols; ++j) y[o + j] = layer_norm_output(x[o + j], s, gamma[j], beta[j]);
  }
}

// The three kernels of CudaOps::layer_norm_backward, in their order.
inline void layer_norm_backward(const float* x, const float* gamma, const float* dy, float* dx, float* dgamma,
                                float* dbeta, int rows, int cols, float eps) {
  std::vector<RowStats> stats(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r) stats[r] = row_stats_of(x + static_cast<size_t>(r) * cols, cols, eps);
  run_every_index(static_cast<size_t>(cols), LayerNormParamGradsColumn{x, dy, stats.data(), rows, cols, dgamma, dbeta});
  for (int r = 0; r < rows; ++r) {
    const size_t o = static_cast<size_t>(r) * cols;
    const DoublePair sums = block_of<DoublePair>(kRowThreads, [&](int t) {
      return strided_norm_grad_sums(x + o, dy + o, gamma, cols, stats[r], t, kRowThreads);
    });
    for (int j = 0; j < cols; ++j)
      dx[o + j] = layer_norm_input_grad(x[o + j], dy[o + j], gamma[j], stats[r], sums, cols);
  }
}

}  // namespace dtsim::gpu::host_emulation
