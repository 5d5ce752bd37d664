// Multi-head scaled dot-product self-attention for the CPU reference backend: one query row of one head at a time,
// plain loops, everything on the calling thread. Every sum runs in a fixed order (keys ascending within a row,
// queries ascending for the key and value gradients), so the results depend only on the inputs; the CUDA kernels
// add in the same orders.
//
// The keys a query sees are always a prefix [0, visible) of its sequence (padding removes a suffix, the causal
// mask another), so masked keys are skipped rather than given a score of −inf: they are never read, their
// probabilities are written as exact zeros and their gradients stay exactly zero.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "gpu/portable_math.hpp"

namespace dtsim::gpu {
namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("cpu backend: ") + what);
}

void validate(const AttentionShape& s) {
  require(s.batch >= 0 && s.seq > 0 && s.heads > 0 && s.head_dim > 0, "attention: bad shape");
  if (!s.key_lengths) return;
  for (int b = 0; b < s.batch; ++b)
    require(s.key_lengths[b] >= 0 && s.key_lengths[b] <= s.seq, "attention: key length outside [0, seq]");
}

// Keys j < visible_keys(s, b, i) are the ones query i of sequence b sees.
int visible_keys(const AttentionShape& s, int b, int i) {
  const int length = s.key_lengths ? s.key_lengths[b] : s.seq;
  return s.causal ? std::min(length, i + 1) : length;
}

// Offset of head h of token t of sequence b in a (batch·seq) × dim matrix.
size_t token_offset(const AttentionShape& s, int b, int t, int h) {
  return (static_cast<size_t>(b) * s.seq + t) * s.dim() + static_cast<size_t>(h) * s.head_dim;
}

// Offset of probs row (b, h, i).
size_t probs_offset(const AttentionShape& s, int b, int h, int i) {
  return ((static_cast<size_t>(b) * s.heads + h) * s.seq + i) * s.seq;
}

template <class T>
T head_dot(const T* a, const T* b, int n) {
  T acc = T(0);
  for (int d = 0; d < n; ++d) acc += a[d] * b[d];
  return acc;
}

}  // namespace

template <class T>
void CpuOps<T>::attention_forward(const AttentionShape& shape, const T* q, const T* k, const T* v, T* probs, T* out) {
  validate(shape);
  const int S = shape.seq, hd = shape.head_dim;
  const T scale = T(1) / std::sqrt(static_cast<T>(hd));
  for (int b = 0; b < shape.batch; ++b)
    for (int h = 0; h < shape.heads; ++h)
      for (int i = 0; i < S; ++i) {
        const int visible = visible_keys(shape, b, i);
        const T* qi = q + token_offset(shape, b, i, h);
        T* p = probs + probs_offset(shape, b, h, i);
        // The scores, kept in the probs row, and their maximum: subtracting it keeps every exponent ≤ 0, so
        // large scores cannot overflow.
        T max_score = T(0);
        for (int j = 0; j < visible; ++j) {
          p[j] = head_dot(qi, k + token_offset(shape, b, j, h), hd) * scale;
          if (j == 0 || p[j] > max_score) max_score = p[j];
        }
        T sum = T(0);
        for (int j = 0; j < visible; ++j) {
          p[j] = portable::exp(p[j] - max_score);
          sum += p[j];
        }
        for (int j = 0; j < visible; ++j) p[j] /= sum;
        std::fill(p + visible, p + S, T(0));

        T* oi = out + token_offset(shape, b, i, h);
        std::fill(oi, oi + hd, T(0));
        for (int j = 0; j < visible; ++j) {
          const T* vj = v + token_offset(shape, b, j, h);
          for (int d = 0; d < hd; ++d) oi[d] += p[j] * vj[d];
        }
      }
}

// Per query row i with p = probs row and s the scaled scores: out_i = Σ_j p_ij v_j gives dv_j += p_ij·dout_i and
// dp_ij = dout_i·v_j; the softmax's Jacobian turns dp into ds_ij = p_ij·(dp_ij − Σ_j' p_ij' dp_ij'); and
// s_ij = q_i·k_j / √hd gives dq_i += ds_ij·k_j / √hd and dk_j += ds_ij·q_i / √hd.
template <class T>
void CpuOps<T>::attention_backward(const AttentionShape& shape, const T* q, const T* k, const T* v, const T* probs,
                                   const T* dout, T* dq, T* dk, T* dv) {
  validate(shape);
  const int S = shape.seq, hd = shape.head_dim;
  const T scale = T(1) / std::sqrt(static_cast<T>(hd));
  const size_t count = static_cast<size_t>(shape.batch) * S * shape.dim();
  std::fill(dq, dq + count, T(0));
  std::fill(dk, dk + count, T(0));
  std::fill(dv, dv + count, T(0));
  std::vector<T> dp(static_cast<size_t>(S));
  for (int b = 0; b < shape.batch; ++b)
    for (int h = 0; h < shape.heads; ++h)
      for (int i = 0; i < S; ++i) {
        const int visible = visible_keys(shape, b, i);
        const T* p = probs + probs_offset(shape, b, h, i);
        const T* qi = q + token_offset(shape, b, i, h);
        const T* douti = dout + token_offset(shape, b, i, h);
        T* dqi = dq + token_offset(shape, b, i, h);
        T weighted = T(0);  // Σ_j p_ij dp_ij
        for (int j = 0; j < visible; ++j) {
          dp[j] = head_dot(douti, v + token_offset(shape, b, j, h), hd);
          weighted += p[j] * dp[j];
        }
        for (int j = 0; j < visible; ++j) {
          const size_t kj = token_offset(shape, b, j, h);
          const T ds = p[j] * (dp[j] - weighted) * scale;  // already divided by √hd
          for (int d = 0; d < hd; ++d) {
            dv[kj + d] += p[j] * douti[d];
            dqi[d] += ds * k[kj + d];
            dk[kj + d] += ds * qi[d];
          }
        }
      }
}

// The angle of pair m of position t is computed in double, and so is the rotation, for float as for double values.
// The cosines and sines depend on (t, m) only, so they are tabulated once per call.
template <class T>
void CpuOps<T>::rotary_embedding(const AttentionShape& shape, T* x, double base, bool inverse) {
  validate(shape);
  require(shape.head_dim % 2 == 0, "rotary_embedding: head_dim must be even");
  require(std::isfinite(base) && base > 1, "rotary_embedding: base must be finite and above 1");
  const int hd = shape.head_dim, pairs = hd / 2;
  std::vector<double> cosines(static_cast<size_t>(shape.seq) * pairs), sines(cosines.size());
  for (int t = 0; t < shape.seq; ++t)
    for (int m = 0; m < pairs; ++m) {
      const double angle = (inverse ? -t : t) * portable::pow(base, -2.0 * m / hd);
      cosines[static_cast<size_t>(t) * pairs + m] = portable::cos(angle);
      sines[static_cast<size_t>(t) * pairs + m] = portable::sin(angle);
    }
  for (int b = 0; b < shape.batch; ++b)
    for (int t = 0; t < shape.seq; ++t)
      for (int h = 0; h < shape.heads; ++h) {
        T* head = x + token_offset(shape, b, t, h);
        const double* c = &cosines[static_cast<size_t>(t) * pairs];
        const double* s = &sines[static_cast<size_t>(t) * pairs];
        for (int m = 0; m < pairs; ++m) {
          const double x0 = head[2 * m], x1 = head[2 * m + 1];
          head[2 * m] = static_cast<T>(x0 * c[m] - x1 * s[m]);
          head[2 * m + 1] = static_cast<T>(x0 * s[m] + x1 * c[m]);
        }
      }
}

// The class itself is instantiated in cpu_ops.cpp; here only the members defined in this file.
#define DTSIM_INSTANTIATE_ATTENTION(T)                                                                       \
  template void CpuOps<T>::attention_forward(const AttentionShape&, const T*, const T*, const T*, T*, T*);  \
  template void CpuOps<T>::attention_backward(const AttentionShape&, const T*, const T*, const T*, const T*, \
                                              const T*, T*, T*, T*);                                     \
  template void CpuOps<T>::rotary_embedding(const AttentionShape&, T*, double, bool);
DTSIM_INSTANTIATE_ATTENTION(float)
DTSIM_INSTANTIATE_ATTENTION(double)

}  // namespace dtsim::gpu
