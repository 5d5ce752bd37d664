// CudaOps: pooling, layer norm and embedding. Backward passes gather (one thread per output element, reading
// its contributions in a fixed order) instead of scattering with atomics, so every result is deterministic.
#include <stdexcept>
#include <string>

#include "gpu/cuda_kernel_math_nn.hpp"
#include "gpu/cuda_ops.hpp"
#include "gpu/cuda_support.cuh"

namespace dtsim::gpu {

using cuda_detail::block_reduce;
using cuda_detail::check_cuda;
using cuda_detail::check_launch;
using cuda_detail::launch_for_each;
using kernels::RowStats;

namespace {

kernels::PoolGeometry checked_geometry(const PoolShape& s, const char* op) {
  const bool positive =
      s.batch >= 0 && s.channels > 0 && s.height > 0 && s.width > 0 && s.kernel > 0 && s.stride > 0;
  if (!positive) throw std::invalid_argument(std::string("cuda backend: ") + op + ": invalid pooling shape");
  if (s.kernel > s.height || s.kernel > s.width) {
    throw std::invalid_argument(std::string("cuda backend: ") + op + ": window larger than the input");
  }
  return kernels::pool_geometry(s);
}

size_t planes(const PoolShape& s) { return static_cast<size_t>(s.batch) * s.channels; }

void check_sizes(bool ok, const char* op) {
  if (!ok) throw std::invalid_argument(std::string("cuda backend: ") + op + ": negative size");
}

// The row's mean and 1/sqrt(var + eps), each thread folding a strided slice of the row.
__device__ RowStats block_row_stats(const float* x, int cols, float eps, double* shared) {
  const int tid = static_cast<int>(threadIdx.x);
  const int step = static_cast<int>(blockDim.x);
  const double mean =
      kernels::row_mean(block_reduce(kernels::strided_row_sum(x, cols, tid, step), shared, kernels::Add{}), cols);
  const double squares =
      block_reduce(kernels::strided_centered_squares(x, cols, mean, tid, step), shared, kernels::Add{});
  return kernels::row_stats(mean, squares, cols, eps);
}

__global__ void layer_norm_forward_rows(const float* x, const float* gamma, const float* beta, float* y, int cols,
                                        float eps) {
  __shared__ double shared[kernels::kRowThreads];
  const size_t offset = static_cast<size_t>(blockIdx.x) * cols;
  const RowStats s = block_row_stats(x + offset, cols, eps, shared);
  for (int j = static_cast<int>(threadIdx.x); j < cols; j += static_cast<int>(blockDim.x))
    y[offset + j] = kernels::layer_norm_output(x[offset + j], s, gamma[j], beta[j]);
}

__global__ void layer_norm_stats_rows(const float* x, int cols, float eps, RowStats* stats) {
  __shared__ double shared[kernels::kRowThreads];
  const RowStats s = block_row_stats(x + static_cast<size_t>(blockIdx.x) * cols, cols, eps, shared);
  if (threadIdx.x == 0) stats[blockIdx.x] = s;
}

// Each thread writes only the dx elements whose dy it read itself, after the barrier: dx may alias dy.
__global__ void layer_norm_input_grad_rows(const float* x, const float* gamma, const float* dy, const RowStats* stats,
                                           float* dx, int cols) {
  __shared__ kernels::DoublePair shared[kernels::kRowThreads];
  const int tid = static_cast<int>(threadIdx.x);
  const int step = static_cast<int>(blockDim.x);
  const size_t offset = static_cast<size_t>(blockIdx.x) * cols;
  const RowStats s = stats[blockIdx.x];
  const kernels::DoublePair sums = block_reduce(
      kernels::strided_norm_grad_sums(x + offset, dy + offset, gamma, cols, s, tid, step), shared, kernels::Add{});
  for (int j = tid; j < cols; j += step)
    dx[offset + j] = kernels::layer_norm_input_grad(x[offset + j], dy[offset + j], gamma[j], s, sums, cols);
}

}  // namespace

// ---- pooling --------------------------------------------------------------------------------------------------

void CudaOps::max_pool_forward(const PoolShape& shape, const float* x, float* y) {
  const kernels::PoolGeometry g = checked_geometry(shape, "max_pool_forward");
  launch_for_each(planes(shape) * g.out_plane(), kernels::MaxPoolForwardElement{x, y, g},
                  "max_pool_forward kernel launch");
}

void CudaOps::max_pool_backward(const PoolShape& shape, const float* x, const float* y, const float* dy, float* dx) {
  const kernels::PoolGeometry g = checked_geometry(shape, "max_pool_backward");
  launch_for_each(planes(shape) * g.in_plane(), kernels::MaxPoolBackwardElement{x, y, dy, dx, g},
                  "max_pool_backward kernel launch");
}

void CudaOps::avg_pool_forward(const PoolShape& shape, const float* x, float* y) {
  const kernels::PoolGeometry g = checked_geometry(shape, "avg_pool_forward");
  launch_for_each(planes(shape) * g.out_plane(), kernels::AvgPoolForwardElement{x, y, g},
                  "avg_pool_forward kernel launch");
}

void CudaOps::avg_pool_backward(const PoolShape& shape, const float* dy, float* dx) {
  const kernels::PoolGeometry g = checked_geometry(shape, "avg_pool_backward");
  launch_for_each(planes(shape) * g.in_plane(), kernels::AvgPoolBackwardElement{dy, dx, g},
                  "avg_pool_backward kernel launch");
}

// ---- layer norm -----------------------------------------------------------------------------------------------

void CudaOps::layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y, int rows, int cols,
                                 float eps) {
  check_sizes(rows >= 0 && cols >= 0, "layer_norm_forward");
  if (rows == 0 || cols == 0) return;
  layer_norm_forward_rows<<<rows, kernels::kRowThreads>>>(x, gamma, beta, y, cols, eps);
  check_launch("layer_norm_forward kernel launch");
}

void CudaOps::layer_norm_backward(const float* x, const float* gamma, const float* dy, float* dx, float* dgamma,
                                  float* dbeta, int rows, int cols, float eps) {
  check_sizes(rows >= 0 && cols >= 0, "layer_norm_backward");
  if (cols == 0) return;
  if (rows == 0) {
    fill(dgamma, static_cast<size_t>(cols), 0.0f);
    fill(dbeta, static_cast<size_t>(cols), 0.0f);
    return;
  }
  // Statistics first, then dgamma and dbeta (which read dy), then dx, so that dx may share dy's memory.
  auto* stats = static_cast<RowStats*>(workspace(static_cast<size_t>(rows) * sizeof(RowStats)));
  layer_norm_stats_rows<<<rows, kernels::kRowThreads>>>(x, cols, eps, stats);
  check_launch("layer_norm_backward statistics kernel launch");
  launch_for_each(static_cast<size_t>(cols), kernels::LayerNormParamGradsColumn{x, dy, stats, rows, cols, dgamma, dbeta},
                  "layer_norm_backward parameter-gradient kernel launch");
  layer_norm_input_grad_rows<<<rows, kernels::kRowThreads>>>(x, gamma, dy, stats, dx, cols);
  check_launch("layer_norm_backward input-gradient kernel launch");
}

// ---- embedding ------------------------------------------------------------------------------------------------

void CudaOps::embedding_forward(const float* ids, const float* table, float* out, int rows, int vocab, int dim) {
  check_sizes(rows >= 0 && vocab >= 0 && dim >= 0, "embedding_forward");
  launch_for_each(static_cast<size_t>(rows) * dim, kernels::EmbeddingForwardElement{ids, table, out, vocab, dim},
                  "embedding_forward kernel launch");
}

void CudaOps::embedding_backward(const float* ids, const float* dout, float* dtable, int rows, int vocab, int dim) {
  check_sizes(rows >= 0 && vocab >= 0 && dim >= 0, "embedding_backward");
  if (vocab == 0 || dim == 0) return;
  // The ids are one float per row: cheap to bring over and group on the host (see kernels::RowsById).
  std::vector<float> host_ids(static_cast<size_t>(rows));
  download(host_ids.data(), ids, host_ids.size());
  const kernels::RowsById groups = kernels::group_rows_by_id(host_ids.data(), rows, vocab);
  const size_t offsets_bytes = groups.offsets.size() * sizeof(int);
  char* base = static_cast<char*>(workspace(offsets_bytes + groups.order.size() * sizeof(int)));
  auto* offsets = reinterpret_cast<int*>(base);
  auto* order = reinterpret_cast<int*>(base + offsets_bytes);
  check_cuda(cudaMemcpy(offsets, groups.offsets.data(), offsets_bytes, cudaMemcpyHostToDevice),
             "cudaMemcpy (embedding_backward row offsets)");
  if (!groups.order.empty()) {
    check_cuda(cudaMemcpy(order, groups.order.data(), groups.order.size() * sizeof(int), cudaMemcpyHostToDevice),
               "cudaMemcpy (embedding_backward row order)");
  }
  launch_for_each(static_cast<size_t>(vocab) * dim, kernels::EmbeddingBackwardElement{offsets, order, dout, dtable, dim},
                  "embedding_backward kernel launch");
}

}  // namespace dtsim::gpu
