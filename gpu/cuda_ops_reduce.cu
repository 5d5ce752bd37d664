// CudaOps: the reductions and softmax cross-entropy. Deterministic by construction: the launch configuration
// depends only on the sizes, every block folds its threads with a fixed tree, and per-block partials are folded
// by a single block; no floating-point atomics anywhere.
#include <stdexcept>
#include <vector>

#include "gpu/cuda_ops.hpp"
#include "gpu/cuda_support.cuh"

namespace dtsim::gpu {

using cuda_detail::block_reduce;
using cuda_detail::check_cuda;
using cuda_detail::check_launch;
using cuda_detail::reduce_to_partials;

namespace {

// Room for the partials of the widest grid plus the final result.
constexpr size_t kReduceWorkspaceBytes = (kernels::kMaxReduceBlocks + 1) * sizeof(double);
static_assert(sizeof(unsigned long long) <= sizeof(double), "the reduction workspace holds either accumulator");

// Two passes of the same kernel: the grid folds `count` terms into one partial per block, then a single block
// folds the partials in the same way. Returns the result, copied to the host.
template <class Term>
typename Term::Acc reduce(Term term, size_t count, void* workspace) {
  using Acc = typename Term::Acc;
  if (count == 0) return Acc{0};
  const int blocks = kernels::reduce_blocks(count);
  Acc* partials = static_cast<Acc*>(workspace);
  Acc* result = partials + blocks;
  reduce_to_partials<<<blocks, kernels::kReduceThreads>>>(term, count, partials);
  check_launch("reduction kernel launch");
  reduce_to_partials<<<1, kernels::kReduceThreads>>>(kernels::PartialTerm<Acc>{partials}, static_cast<size_t>(blocks),
                                                     result);
  check_launch("reduction final-pass kernel launch");
  Acc host = 0;
  check_cuda(cudaMemcpy(&host, result, sizeof(Acc), cudaMemcpyDeviceToHost), "cudaMemcpy (reduction result)");
  return host;
}

struct RowLoss {
  double loss;
  int correct;
};

// One block per row: the first arg-max, then the log of the softmax denominator in double, then the row's loss
// and, when asked, its gradient. Every read of the row happens before the second reduction's barrier and each
// gradient element is written by the thread that read that logit, so dlogits may alias logits.
__global__ void softmax_xent_rows(const float* logits, int cols, const int* labels, float* dlogits, float grad_scale,
                                  RowLoss* rows_out) {
  __shared__ kernels::ArgMax argmax_shared[kernels::kRowThreads];
  __shared__ double sum_shared[kernels::kRowThreads];
  const int tid = static_cast<int>(threadIdx.x);
  const int step = static_cast<int>(blockDim.x);
  const size_t row = blockIdx.x;
  const float* z = logits + row * cols;
  const kernels::ArgMax best =
      block_reduce(kernels::strided_argmax(z, cols, tid, step), argmax_shared, kernels::BetterArgMax{});
  const int argmax = kernels::finish_argmax(z, best);
  const float zmax = z[argmax];
  const int label = labels[row];
  const float z_label = z[label];
  const double denom = block_reduce(kernels::strided_exp_sum(z, cols, zmax, tid, step), sum_shared, kernels::Add{});
  const double log_denom = log(denom);
  if (tid == 0) rows_out[row] = RowLoss{kernels::softmax_xent_loss(z_label, zmax, log_denom), argmax == label ? 1 : 0};
  if (dlogits) {
    float* d = dlogits + row * cols;
    for (int j = tid; j < cols; j += step) d[j] = kernels::softmax_xent_grad(z[j], zmax, log_denom, j == label, grad_scale);
  }
}

}  // namespace

double CudaOps::sum(const float* x, size_t count) {
  return reduce(kernels::SumTerm{x}, count, workspace(kReduceWorkspaceBytes));
}

double CudaOps::sum_squares(const float* x, size_t count) {
  return reduce(kernels::SquareTerm{x}, count, workspace(kReduceWorkspaceBytes));
}

double CudaOps::dot(const float* x, const float* y, size_t count) {
  return reduce(kernels::DotTerm{x, y}, count, workspace(kReduceWorkspaceBytes));
}

size_t CudaOps::count_nonfinite(const float* x, size_t count) {
  return static_cast<size_t>(reduce(kernels::NonfiniteTerm{x}, count, workspace(kReduceWorkspaceBytes)));
}

LossSums CudaOps::softmax_cross_entropy(ConstMatrixView<float> logits, const int32_t* labels, float* dlogits,
                                        float grad_scale) {
  const int rows = logits.rows;
  // Checked on the host before anything runs: a bad label would otherwise read outside the row on the device.
  for (int r = 0; r < rows; ++r) {
    if (labels[r] < 0 || labels[r] >= logits.cols) {
      throw std::invalid_argument("cuda backend: softmax_cross_entropy: label out of range");
    }
  }
  LossSums sums;
  if (rows == 0) return sums;

  // Workspace: the per-row results, then the labels.
  const size_t results_bytes = static_cast<size_t>(rows) * sizeof(RowLoss);
  char* base = static_cast<char*>(workspace(results_bytes + static_cast<size_t>(rows) * sizeof(int32_t)));
  auto* row_results = reinterpret_cast<RowLoss*>(base);
  auto* device_labels = reinterpret_cast<int32_t*>(base + results_bytes);
  check_cuda(cudaMemcpy(device_labels, labels, rows * sizeof(int32_t), cudaMemcpyHostToDevice),
             "cudaMemcpy (softmax_cross_entropy labels)");
  softmax_xent_rows<<<rows, kernels::kRowThreads>>>(logits.data, logits.cols, device_labels, dlogits, grad_scale,
                                                    row_results);
  check_launch("softmax_cross_entropy kernel launch");

  // The rows' losses are added on the host, in row order, like the CPU reference.
  std::vector<RowLoss> host(static_cast<size_t>(rows));
  check_cuda(cudaMemcpy(host.data(), row_results, results_bytes, cudaMemcpyDeviceToHost),
             "cudaMemcpy (softmax_cross_entropy results)");
  for (const RowLoss& r : host) {
    sums.loss += r.loss;
    sums.correct += r.correct;
  }
  return sums;
}

}  // namespace dtsim::gpu
