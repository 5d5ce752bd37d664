// CudaOps: lifetime, memory, the workspace, GEMM through cuBLAS and the other dense-algebra ops.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "gpu/cuda_ops.hpp"
#include "gpu/cuda_support.cuh"

namespace dtsim::gpu {

using cuda_detail::check_cublas;
using cuda_detail::check_cuda;
using cuda_detail::describe;
using cuda_detail::launch_for_each;

namespace {

std::string mib(size_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

// cudaMalloc with the size and the purpose in the error. An out-of-memory error is not sticky: it is cleared so
// that the next launch check does not report it a second time.
void* device_malloc(size_t bytes, const std::string& purpose) {
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error("cuda backend: " + purpose + " of " + mib(bytes) + " failed (cudaMalloc: " +
                             describe(err) + ")");
  }
  return p;
}

}  // namespace

CudaOps::CudaOps(int device) : device_(device) {
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  device_name_ = prop.name;
  cublasHandle_t handle = nullptr;
  check_cublas(cublasCreate(&handle), "cublasCreate");
  cublas_ = handle;
  // The default math mode keeps FP32 inputs and accumulation; TF32 tensor-core math (10-bit mantissas) would
  // break the 1e-4 agreement with the CPU reference, so it is never enabled.
  const cublasStatus_t status = cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
  if (status != CUBLAS_STATUS_SUCCESS) {
    cublasDestroy(handle);
    cublas_ = nullptr;
    check_cublas(status, "cublasSetMathMode");
  }
}

// Errors are ignored here: a destructor must not throw, and at process exit the runtime may already be gone.
CudaOps::~CudaOps() {
  if (workspace_) cudaFree(workspace_);
  if (cublas_) cublasDestroy(cublas_);
}

void CudaOps::synchronize() { check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

void* CudaOps::workspace(size_t bytes) {
  if (bytes <= workspace_bytes_) return workspace_;
  if (workspace_) {
    void* old = workspace_;
    workspace_ = nullptr;
    workspace_bytes_ = 0;
    check_cuda(cudaFree(old), "cudaFree (workspace)");
  }
  // Grow geometrically, from 1 MiB, so that a run of slowly increasing sizes reallocates only a few times.
  const size_t grown = std::max({bytes, size_t{1} << 20, 2 * workspace_bytes_});
  workspace_ = device_malloc(grown, "workspace allocation");
  workspace_bytes_ = grown;
  return workspace_;
}

// ---- memory ---------------------------------------------------------------------------------------------------

float* CudaOps::allocate(size_t count) {
  if (count > SIZE_MAX / sizeof(float)) {
    throw std::runtime_error("cuda backend: allocate of " + std::to_string(count) +
                             " floats failed (the size overflows size_t)");
  }
  // One element at least, so that every allocation is a distinct non-null pointer, as on the CPU.
  const size_t bytes = std::max<size_t>(count, 1) * sizeof(float);
  return static_cast<float*>(device_malloc(bytes, "allocate (" + std::to_string(count) + " floats)"));
}

void CudaOps::release(float* buffer) {
  if (!buffer) return;
  if (cudaFree(buffer) != cudaSuccess) cudaGetLastError();  // see the header: nothing can be thrown from here
}

void CudaOps::upload(float* dst, const float* host_src, size_t count) {
  if (count == 0) return;
  check_cuda(cudaMemcpy(dst, host_src, count * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy (upload)");
}

void CudaOps::download(float* host_dst, const float* src, size_t count) {
  if (count == 0) return;
  check_cuda(cudaMemcpy(host_dst, src, count * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy (download)");
}

void CudaOps::copy(float* dst, const float* src, size_t count) {
  if (count == 0 || dst == src) return;
  const size_t bytes = count * sizeof(float);
  // cudaMemcpy's result is undefined for overlapping ranges, so those go through the workspace.
  const bool overlap = dst < src + count && src < dst + count;
  if (!overlap) {
    check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy (copy)");
    return;
  }
  void* staging = workspace(bytes);
  check_cuda(cudaMemcpy(staging, src, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy (copy, to staging)");
  check_cuda(cudaMemcpy(dst, staging, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy (copy, from staging)");
}

void CudaOps::fill(float* x, size_t count, float value) {
  launch_for_each(count, kernels::FillElement{x, value}, "fill kernel launch");
}

// ---- dense algebra --------------------------------------------------------------------------------------------

void CudaOps::gemm_strided_batched(Transpose ta, Transpose tb, int m, int n, int k, float alpha, const float* a,
                                   long long stride_a, const float* b, long long stride_b, float beta, float* c,
                                   long long stride_c, int batch) {
  if (m == 0 || n == 0 || batch == 0) return;
  if (k == 0) {  // cuBLAS rejects a zero leading dimension; c = beta · c is all there is to do
    for (int i = 0; i < batch; ++i) {
      float* ci = c + i * stride_c;
      const size_t count = static_cast<size_t>(m) * n;
      if (beta == 0.0f) {
        fill(ci, count, 0.0f);
      } else {
        scale(beta, ci, count);
      }
    }
    return;
  }
  const kernels::ColumnMajorGemm cm =
      kernels::column_major_gemm(ta == Transpose::Yes, tb == Transpose::Yes, m, n, k);
  const cublasOperation_t first_op = cm.transpose_first ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t second_op = cm.transpose_second ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasHandle_t handle = cublas_;
  if (batch == 1) {
    check_cublas(cublasSgemm(handle, first_op, second_op, cm.m, cm.n, cm.k, &alpha, b, cm.ld_first, a, cm.ld_second,
                             &beta, c, cm.ld_out),
                 "cublasSgemm");
  } else {
    check_cublas(cublasSgemmStridedBatched(handle, first_op, second_op, cm.m, cm.n, cm.k, &alpha, b, cm.ld_first,
                                           stride_b, a, cm.ld_second, stride_a, &beta, c, cm.ld_out, stride_c, batch),
                 "cublasSgemmStridedBatched");
  }
}

void CudaOps::gemm(Transpose ta, Transpose tb, float alpha, ConstMatrixView<float> a, ConstMatrixView<float> b,
                   float beta, MatrixView<float> c) {
  const GemmSizes g = gemm_sizes(ta, tb, a, b, c);
  if (!g.matches) throw std::invalid_argument("cuda backend: gemm: shapes do not match");
  gemm_strided_batched(ta, tb, g.m, g.n, g.k, alpha, a.data, 0, b.data, 0, beta, c.data, 0, 1);
}

void CudaOps::add_row_vector(MatrixView<float> y, const float* bias) {
  launch_for_each(static_cast<size_t>(y.rows) * y.cols, kernels::AddRowVectorElement{y.data, bias, y.cols},
                  "add_row_vector kernel launch");
}

void CudaOps::column_sums(ConstMatrixView<float> x, float beta, float* out) {
  launch_for_each(static_cast<size_t>(x.cols), kernels::ColumnSumsColumn{x.data, x.rows, x.cols, beta, out},
                  "column_sums kernel launch");
}

void CudaOps::axpy(float alpha, const float* x, float* y, size_t count) {
  launch_for_each(count, kernels::AxpyElement{alpha, x, y}, "axpy kernel launch");
}

void CudaOps::scale(float alpha, float* x, size_t count) {
  launch_for_each(count, kernels::ScaleElement{alpha, x}, "scale kernel launch");
}

}  // namespace dtsim::gpu
