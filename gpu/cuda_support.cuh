// Shared by the cuda_ops*.cu files only: error checking that turns every CUDA and cuBLAS failure into a
// std::runtime_error, the generic elementwise launcher and the block-level tree reduction.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "gpu/cuda_kernel_math.hpp"

namespace dtsim::gpu::cuda_detail {

inline std::string describe(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
}

// `call` names the API call (and the op, where it helps), e.g. "cudaMemcpy (download)".
inline void check_cuda(cudaError_t err, const char* call) {
  if (err != cudaSuccess) throw std::runtime_error(std::string("cuda backend: ") + call + " failed (" + describe(err) + ")");
}

inline void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuda backend: ") + call + " failed (" + cublasGetStatusName(status) + ": " +
                             cublasGetStatusString(status) + ")");
  }
}

// Launch errors (bad configuration, missing kernel image for this GPU) are reported at once. Faults while the
// kernel runs surface at the next synchronising call (a download, a reduction's result, CudaOps::synchronize).
inline void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

inline unsigned elementwise_blocks(size_t count) {
  const size_t wanted = (count + kernels::kElementwiseThreads - 1) / kernels::kElementwiseThreads;
  return wanted > kernels::kMaxElementwiseBlocks ? kernels::kMaxElementwiseBlocks : static_cast<unsigned>(wanted);
}

// Calls op(i) once for every i in [0, count): the whole body of every elementwise kernel.
template <class Op>
__global__ void for_each_index(size_t count, Op op) {
  const size_t step = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) op(i);
}

template <class Op>
void launch_for_each(size_t count, Op op, const char* kernel) {
  if (count == 0) return;
  for_each_index<<<elementwise_blocks(count), kernels::kElementwiseThreads>>>(count, op);
  check_launch(kernel);
}

// Folds one value per thread of the block (blockDim.x a power of two, at most the size of `shared`) with the
// fixed tree of kernels::tree_fold and returns the result to every thread.
template <class T, class Combine>
__device__ T block_reduce(T value, T* shared, Combine combine) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) kernels::tree_fold(shared, static_cast<int>(threadIdx.x), stride, combine);
    __syncthreads();
  }
  const T result = shared[0];
  __syncthreads();  // `shared` may be reused as soon as this returns
  return result;
}

// The first pass of a reduction: each block folds its grid-strided slice into partials[blockIdx.x].
template <class Term>
__global__ void reduce_to_partials(Term term, size_t count, typename Term::Acc* partials) {
  using Acc = typename Term::Acc;
  __shared__ Acc shared[kernels::kReduceThreads];
  const size_t first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t step = static_cast<size_t>(gridDim.x) * blockDim.x;
  const Acc block_total = block_reduce(kernels::strided_sum(term, count, first, step), shared, kernels::Add{});
  if (threadIdx.x == 0) partials[blockIdx.x] = block_total;
}

}  // namespace dtsim::gpu::cuda_detail
