// What one CUDA thread computes, as plain inline functions and functors that compile for the host and, under
// nvcc, for the device. The kernels in cuda_ops*.cu are thin wrappers around them: an elementwise kernel
// computes a flat index and calls a functor with it; a row or reduction kernel has each thread fold a strided
// slice with a `strided_*` function and combines the threads with `tree_fold`. Because the logic lives here,
// tests/gpu/cuda_kernel_logic_test.cpp can run it over every index on a machine without a GPU and compare it
// with CpuOps: that is how the index arithmetic is verified where no kernel can be launched.
//
// This header covers elementwise ops, activations, reductions, softmax cross-entropy and the optimizer
// updates; cuda_kernel_math_nn.hpp covers convolution, pooling, layer norm and embedding.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "gpu/number_format.hpp"

namespace dtsim::gpu::kernels {

// ---- launch configuration -------------------------------------------------------------------------------------
// Fixed sizes: a reduction's summation order depends only on these and on the element count, so results are
// bit-identical from run to run. The tree reductions need power-of-two block sizes.
constexpr int kElementwiseThreads = 256;
constexpr unsigned kMaxElementwiseBlocks = 65536;  // grid-stride loops cover the rest
constexpr int kReduceThreads = 256;
constexpr int kMaxReduceBlocks = 1024;  // per-block partials, then one block folds them
constexpr int kRowThreads = 128;        // one block per row (softmax, layer norm) or per channel (conv bias)

// Blocks of a reduction over `count` elements: enough to give every thread work, capped so that the final
// single-block pass stays short.
DTSIM_HOST_DEVICE inline int reduce_blocks(size_t count) {
  const size_t wanted = (count + kReduceThreads - 1) / kReduceThreads;
  if (wanted < 1) return 1;
  return wanted > static_cast<size_t>(kMaxReduceBlocks) ? kMaxReduceBlocks : static_cast<int>(wanted);
}

// ---- cuBLAS arguments -----------------------------------------------------------------------------------------
// cuBLAS is column-major, and a row-major matrix read column-major is its transpose. So the row-major
// C = op(A)·op(B) (m × n, inner size k) is computed as the column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: the operands swap
// places, m and n swap, and each operand keeps its own transpose flag. Leading dimensions are the row lengths of
// the matrices as stored. (Host-only; kept here so that the host test can check it against a column-major GEMM.)
struct ColumnMajorGemm {
  bool transpose_first;   // cuBLAS's first operand: our B
  bool transpose_second;  // cuBLAS's second operand: our A
  int m, n, k;
  int ld_first, ld_second, ld_out;
};

inline ColumnMajorGemm column_major_gemm(bool transpose_a, bool transpose_b, int m, int n, int k) {
  return ColumnMajorGemm{transpose_b, transpose_a, n, m, k, transpose_b ? k : n, transpose_a ? m : k, n};
}

// ---- tree combination -----------------------------------------------------------------------------------------
struct Add {
  template <class T>
  DTSIM_HOST_DEVICE T operator()(const T& a, const T& b) const {
    return a + b;
  }
};

// One level of a block's tree reduction: thread `tid` (< stride) folds in the value `stride` places above it.
// Kernels run the levels stride = blockDim/2, …, 1 with a barrier between them; the host test runs the same
// levels in a loop, so both see the same pairing and hence the same rounding.
template <class T, class Combine>
DTSIM_HOST_DEVICE inline void tree_fold(T* values, int tid, int stride, Combine combine) {
  values[tid] = combine(values[tid], values[tid + stride]);
}

// The slice of a reduction that thread `first` of `step` threads accumulates: elements first, first + step, …
// `Term` maps an index to the value to add and names the accumulator type (double, or an integer count).
template <class Term>
DTSIM_HOST_DEVICE inline typename Term::Acc strided_sum(Term term, size_t count, size_t first, size_t step) {
  typename Term::Acc acc = 0;
  for (size_t i = first; i < count; i += step) acc += term(i);
  return acc;
}

struct SumTerm {
  using Acc = double;
  const float* x;
  DTSIM_HOST_DEVICE double operator()(size_t i) const { return static_cast<double>(x[i]); }
};

struct SquareTerm {
  using Acc = double;
  const float* x;
  DTSIM_HOST_DEVICE double operator()(size_t i) const {
    const double v = x[i];
    return v * v;
  }
};

struct DotTerm {
  using Acc = double;
  const float* x;
  const float* y;
  DTSIM_HOST_DEVICE double operator()(size_t i) const {
    return static_cast<double>(x[i]) * static_cast<double>(y[i]);
  }
};

// NaN and ±inf are exactly the floats whose exponent bits are all ones; testing the bits avoids relying on
// isfinite overloads that differ between host and device headers.
DTSIM_HOST_DEVICE inline bool is_finite(float x) { return (float_bits(x) & 0x7F800000u) != 0x7F800000u; }

struct NonfiniteTerm {
  using Acc = unsigned long long;
  const float* x;
  DTSIM_HOST_DEVICE unsigned long long operator()(size_t i) const { return is_finite(x[i]) ? 0ull : 1ull; }
};

// The final pass reads the per-block partials back as a term.
template <class AccType>
struct PartialTerm {
  using Acc = AccType;
  const AccType* partials;
  DTSIM_HOST_DEVICE AccType operator()(size_t i) const { return partials[i]; }
};

// ---- memory and dense algebra (one index per element unless noted) --------------------------------------------
struct FillElement {
  float* x;
  float value;
  DTSIM_HOST_DEVICE void operator()(size_t i) const { x[i] = value; }
};

struct AxpyElement {
  float alpha;
  const float* x;
  float* y;
  DTSIM_HOST_DEVICE void operator()(size_t i) const { y[i] += alpha * x[i]; }
};

struct ScaleElement {
  float alpha;
  float* x;
  DTSIM_HOST_DEVICE void operator()(size_t i) const { x[i] *= alpha; }
};

struct AddRowVectorElement {
  float* y;
  const float* bias;
  int cols;
  DTSIM_HOST_DEVICE void operator()(size_t i) const { y[i] += bias[i % static_cast<size_t>(cols)]; }
};

// One index per column, summing the rows top to bottom in float exactly as the CPU reference does. Adjacent
// threads read adjacent columns, so the loads coalesce; batches have few enough rows for this to be cheap.
struct ColumnSumsColumn {
  const float* x;
  int rows;
  int cols;
  float beta;
  float* out;
  DTSIM_HOST_DEVICE void operator()(size_t j) const {
    float acc = beta == 0.0f ? 0.0f : beta * out[j];
    for (int r = 0; r < rows; ++r) acc += x[static_cast<size_t>(r) * cols + j];
    out[j] = acc;
  }
};

struct RoundToFormatElement {
  float* x;
  NumberFormat format;
  DTSIM_HOST_DEVICE void operator()(size_t i) const { x[i] = round_to(x[i], format); }
};

// ---- activations ----------------------------------------------------------------------------------------------
// GELU is evaluated in double, like the CPU reference, so the two agree to the last float bit in practice.
constexpr double kSqrtHalf = 0.70710678118654752440;    // 1/√2
constexpr double kInvSqrt2Pi = 0.3989422804014327;       // 1/√(2π)

DTSIM_HOST_DEVICE inline float gelu(float x) {
  const double v = x;
  return static_cast<float>(0.5 * v * (1.0 + erf(v * kSqrtHalf)));
}

DTSIM_HOST_DEVICE inline float gelu_grad(float x, float dy) {
  const double v = x;
  const double cdf = 0.5 * (1.0 + erf(v * kSqrtHalf));
  const double pdf = kInvSqrt2Pi * exp(-0.5 * v * v);
  return static_cast<float>(static_cast<double>(dy) * (cdf + v * pdf));
}

struct ReluForwardElement {
  const float* x;
  float* y;
  DTSIM_HOST_DEVICE void operator()(size_t i) const { y[i] = x[i] > 0.0f ? x[i] : 0.0f; }
};

struct ReluBackwardElement {
  const float* y;
  const float* dy;
  float* dx;
  DTSIM_HOST_DEVICE void operator()(size_t i) const { dx[i] = y[i] > 0.0f ? dy[i] : 0.0f; }
};

struct GeluForwardElement {
  const float* x;
  float* y;
  DTSIM_HOST_DEVICE void operator()(size_t i) const { y[i] = gelu(x[i]); }
};

struct GeluBackwardElement {
  const float* x;
  const float* dy;
  float* dx;
  DTSIM_HOST_DEVICE void operator()(size_t i) const { dx[i] = gelu_grad(x[i], dy[i]); }
};

struct TanhForwardElement {
  const float* x;
  float* y;
  DTSIM_HOST_DEVICE void operator()(size_t i) const { y[i] = tanhf(x[i]); }
};

struct TanhBackwardElement {
  const float* y;
  const float* dy;
  float* dx;
  DTSIM_HOST_DEVICE void operator()(size_t i) const { dx[i] = dy[i] * (1.0f - y[i] * y[i]); }
};

// ---- softmax cross-entropy (one block per row) ---------------------------------------------------------------
// A candidate for the row's first arg-max. `index < 0` marks a thread that has seen no comparable value yet.
struct ArgMax {
  float value;
  int index;
};

// The CPU reference scans left to right and moves on only for a strictly greater value, so NaNs are never
// picked (after index 0) and ties go to the lowest index. This comparison gives the same answer in any
// combination order: the larger value wins, equal values go to the lower index, NaNs never win.
struct BetterArgMax {
  DTSIM_HOST_DEVICE ArgMax operator()(const ArgMax& a, const ArgMax& b) const {
    if (b.index < 0) return a;
    if (a.index < 0) return b;
    if (b.value > a.value || (b.value == a.value && b.index < a.index)) return b;
    return a;
  }
};

DTSIM_HOST_DEVICE inline ArgMax strided_argmax(const float* z, int cols, int first, int step) {
  ArgMax best{0.0f, -1};
  for (int j = first; j < cols; j += step) {
    if (z[j] != z[j]) continue;  // NaN
    best = BetterArgMax{}(best, ArgMax{z[j], j});
  }
  return best;
}

// The reference starts its scan at index 0 whatever that value is: a NaN there is never replaced.
DTSIM_HOST_DEVICE inline int finish_argmax(const float* z, ArgMax best) {
  if (z[0] != z[0] || best.index < 0) return 0;
  return best.index;
}

DTSIM_HOST_DEVICE inline double strided_exp_sum(const float* z, int cols, float zmax, int first, int step) {
  double acc = 0.0;
  for (int j = first; j < cols; j += step) acc += exp(static_cast<double>(z[j] - zmax));
  return acc;
}

DTSIM_HOST_DEVICE inline double softmax_xent_loss(float z_label, float zmax, double log_denom) {
  return log_denom - static_cast<double>(z_label - zmax);
}

// grad_scale · (softmax − onehot) for one logit.
DTSIM_HOST_DEVICE inline float softmax_xent_grad(float z, float zmax, double log_denom, bool is_label,
                                                 float grad_scale) {
  const double p = exp(static_cast<double>(z - zmax) - log_denom);
  return static_cast<float>(grad_scale * (p - (is_label ? 1.0 : 0.0)));
}

// ---- optimizer updates (one index per parameter; the float expressions follow cpu_ops_optim.cpp) -------------
struct SgdMomentumElement {
  float* w;
  const float* g;
  float* v;
  float lr, momentum, weight_decay;
  bool nesterov;
  DTSIM_HOST_DEVICE void operator()(size_t i) const {
    const float grad = g[i] + weight_decay * w[i];
    const float velocity = momentum * v[i] + grad;
    v[i] = velocity;
    w[i] -= lr * (nesterov ? grad + momentum * velocity : velocity);
  }
};

struct AdamElement {
  float* w;
  const float* g;
  float* m;
  float* v;
  float lr, beta1, beta2, eps, weight_decay;
  bool decoupled;
  float bias_correction1, bias_correction2;
  DTSIM_HOST_DEVICE void operator()(size_t i) const {
    float weight = w[i];
    float grad = g[i];
    if (decoupled) {
      weight *= 1.0f - lr * weight_decay;
    } else {
      grad += weight_decay * weight;
    }
    const float m_new = beta1 * m[i] + (1.0f - beta1) * grad;
    const float v_new = beta2 * v[i] + (1.0f - beta2) * grad * grad;
    m[i] = m_new;
    v[i] = v_new;
    w[i] = weight - lr * (m_new / bias_correction1) / (sqrtf(v_new / bias_correction2) + eps);
  }
};

struct LambDirectionElement {
  const float* w;
  const float* g;
  float* m;
  float* v;
  float* u;
  float beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2;
  DTSIM_HOST_DEVICE void operator()(size_t i) const {
    const float grad = g[i];
    const float m_new = beta1 * m[i] + (1.0f - beta1) * grad;
    const float v_new = beta2 * v[i] + (1.0f - beta2) * grad * grad;
    m[i] = m_new;
    v[i] = v_new;
    u[i] = (m_new / bias_correction1) / (sqrtf(v_new / bias_correction2) + eps) + weight_decay * w[i];
  }
};

}  // namespace dtsim::gpu::kernels
