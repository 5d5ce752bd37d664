#include "cpu_ops.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "gpu/numerics_environment.hpp"
#include "gpu/portable_math.hpp"

namespace dtsim::gpu {
namespace {

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <class T>
Eigen::Map<const RowMajor<T>> as_eigen(ConstMatrixView<T> m) {
  return Eigen::Map<const RowMajor<T>>(m.data, m.rows, m.cols);
}

template <class T>
Eigen::Map<RowMajor<T>> as_eigen(MatrixView<T> m) {
  return Eigen::Map<RowMajor<T>>(m.data, m.rows, m.cols);
}

// Eigen derives its GEMM blocking from the cache sizes it reads off the CPU, and the blocking of the inner
// dimension decides the order in which each output's sum is accumulated. dtsim gives it fixed sizes before the
// first product, so that every CPU accumulates in the same order (gpu/numerics_environment.hpp).
void pin_gemm_blocking_once() {
  static const bool pinned = [] {
    Eigen::setCpuCacheSizes(kPinnedGemmBlocking.l1_bytes, kPinnedGemmBlocking.l2_bytes, kPinnedGemmBlocking.l3_bytes);
    return true;
  }();
  (void)pinned;
}

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("cpu backend: ") + what);
}

}  // namespace

template <class T>
T* CpuOps<T>::allocate(size_t count) {
  // 64-byte alignment keeps Eigen's vectorised kernels on their fast path.
  return static_cast<T*>(::operator new[](std::max<size_t>(count, 1) * sizeof(T), std::align_val_t(64)));
}

template <class T>
void CpuOps<T>::release(T* buffer) {
  ::operator delete[](buffer, std::align_val_t(64));
}

template <class T>
void CpuOps<T>::upload(T* dst, const T* host_src, size_t count) {
  if (count) std::memcpy(dst, host_src, count * sizeof(T));
}

template <class T>
void CpuOps<T>::download(T* host_dst, const T* src, size_t count) {
  if (count) std::memcpy(host_dst, src, count * sizeof(T));
}

template <class T>
void CpuOps<T>::copy(T* dst, const T* src, size_t count) {
  if (count && dst != src) std::memmove(dst, src, count * sizeof(T));
}

template <class T>
void CpuOps<T>::fill(T* x, size_t count, T value) {
  std::fill(x, x + count, value);
}

template <class T>
void CpuOps<T>::gemm(Transpose ta, Transpose tb, T alpha, ConstMatrixView<T> a, ConstMatrixView<T> b, T beta,
                     MatrixView<T> c) {
  const bool at = ta == Transpose::Yes;
  const bool bt = tb == Transpose::Yes;
  require(gemm_sizes(ta, tb, a, b, c).matches, "gemm: shapes do not match");
  pin_gemm_blocking_once();

  auto C = as_eigen(c);
  if (beta == T(0)) {
    C.setZero();
  } else if (beta != T(1)) {
    C *= beta;
  }
  const auto A = as_eigen(a);
  const auto B = as_eigen(b);
  if (!at && !bt) C.noalias() += alpha * A * B;
  if (!at && bt) C.noalias() += alpha * A * B.transpose();
  if (at && !bt) C.noalias() += alpha * A.transpose() * B;
  if (at && bt) C.noalias() += alpha * A.transpose() * B.transpose();
}

template <class T>
void CpuOps<T>::add_row_vector(MatrixView<T> y, const T* bias) {
  for (int r = 0; r < y.rows; ++r) {
    T* row = y.data + static_cast<size_t>(r) * y.cols;
    for (int j = 0; j < y.cols; ++j) row[j] += bias[j];
  }
}

template <class T>
void CpuOps<T>::column_sums(ConstMatrixView<T> x, T beta, T* out) {
  for (int j = 0; j < x.cols; ++j) out[j] = beta == T(0) ? T(0) : beta * out[j];
  for (int r = 0; r < x.rows; ++r) {
    const T* row = x.data + static_cast<size_t>(r) * x.cols;
    for (int j = 0; j < x.cols; ++j) out[j] += row[j];
  }
}

template <class T>
void CpuOps<T>::axpy(T alpha, const T* x, T* y, size_t count) {
  for (size_t i = 0; i < count; ++i) y[i] += alpha * x[i];
}

template <class T>
void CpuOps<T>::scale(T alpha, T* x, size_t count) {
  for (size_t i = 0; i < count; ++i) x[i] *= alpha;
}

// Reductions run in index order in double, the same on every call and every thread count.
template <class T>
double CpuOps<T>::sum(const T* x, size_t count) {
  double s = 0.0;
  for (size_t i = 0; i < count; ++i) s += static_cast<double>(x[i]);
  return s;
}

template <class T>
double CpuOps<T>::sum_squares(const T* x, size_t count) {
  double s = 0.0;
  for (size_t i = 0; i < count; ++i) s += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  return s;
}

template <class T>
double CpuOps<T>::dot(const T* x, const T* y, size_t count) {
  double s = 0.0;
  for (size_t i = 0; i < count; ++i) s += static_cast<double>(x[i]) * static_cast<double>(y[i]);
  return s;
}

template <class T>
size_t CpuOps<T>::count_nonfinite(const T* x, size_t count) {
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) n += std::isfinite(x[i]) ? 0 : 1;
  return n;
}

template <class T>
void CpuOps<T>::relu_forward(const T* x, T* y, size_t count) {
  for (size_t i = 0; i < count; ++i) y[i] = x[i] > T(0) ? x[i] : T(0);
}

template <class T>
void CpuOps<T>::relu_backward(const T* y, const T* dy, T* dx, size_t count) {
  for (size_t i = 0; i < count; ++i) dx[i] = y[i] > T(0) ? dy[i] : T(0);
}

template <class T>
void CpuOps<T>::gelu_forward(const T* x, T* y, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const double v = static_cast<double>(x[i]);
    y[i] = static_cast<T>(0.5 * v * (1.0 + portable::erf(v * M_SQRT1_2)));
  }
}

template <class T>
void CpuOps<T>::gelu_backward(const T* x, const T* dy, T* dx, size_t count) {
  constexpr double inv_sqrt_2pi = 0.3989422804014327;  // 1/√(2π)
  for (size_t i = 0; i < count; ++i) {
    const double v = static_cast<double>(x[i]);
    const double cdf = 0.5 * (1.0 + portable::erf(v * M_SQRT1_2));
    const double pdf = inv_sqrt_2pi * portable::exp(-0.5 * v * v);
    dx[i] = static_cast<T>(static_cast<double>(dy[i]) * (cdf + v * pdf));
  }
}

template <class T>
void CpuOps<T>::tanh_forward(const T* x, T* y, size_t count) {
  for (size_t i = 0; i < count; ++i) y[i] = portable::tanh(x[i]);
}

template <class T>
void CpuOps<T>::tanh_backward(const T* y, const T* dy, T* dx, size_t count) {
  for (size_t i = 0; i < count; ++i) dx[i] = dy[i] * (T(1) - y[i] * y[i]);
}

template <class T>
LossSums CpuOps<T>::softmax_cross_entropy(ConstMatrixView<T> logits, const int32_t* labels, T* dlogits,
                                          T grad_scale) {
  LossSums sums;
  const int classes = logits.cols;
  for (int r = 0; r < logits.rows; ++r) {
    const T* z = logits.data + static_cast<size_t>(r) * classes;
    const int label = labels[r];
    require(label >= 0 && label < classes, "softmax_cross_entropy: label out of range");
    // Subtract the row maximum so exp() cannot overflow; the first maximum is the prediction.
    int argmax = 0;
    for (int j = 1; j < classes; ++j)
      if (z[j] > z[argmax]) argmax = j;
    const T zmax = z[argmax];
    double denom = 0.0;
    for (int j = 0; j < classes; ++j) denom += portable::exp(static_cast<double>(z[j] - zmax));
    const double log_denom = portable::log(denom);
    sums.loss += log_denom - static_cast<double>(z[label] - zmax);
    sums.correct += argmax == label ? 1 : 0;
    if (dlogits) {
      T* d = dlogits + static_cast<size_t>(r) * classes;
      for (int j = 0; j < classes; ++j) {
        const double p = portable::exp(static_cast<double>(z[j] - zmax) - log_denom);
        d[j] = static_cast<T>(grad_scale * (p - (j == label ? 1.0 : 0.0)));
      }
    }
  }
  return sums;
}

template <class T>
void CpuOps<T>::round_to_format(T* x, size_t count, NumberFormat format) {
  if (format == NumberFormat::Fp32) return;
  // Doubles go through float first; the emulation targets fp32 master values, where this is exact.
  for (size_t i = 0; i < count; ++i) x[i] = static_cast<T>(round_to(static_cast<float>(x[i]), format));
}

template class CpuOps<float>;
template class CpuOps<double>;

}  // namespace dtsim::gpu
