// Per-thread logic of the CUDA multi-head self-attention, compiled for host and device (see cuda_kernel_math.hpp for
// why), and the order in which CudaOps launches it, written once against an executor as in cuda_conv_plan.hpp (an
// executor provides for_each(count, functor, name), calling functor(i) for every i < count). So the host test runs
// exactly the kernels' arithmetic in exactly their sequence.
//
// Every output element is written by one thread that reads all its contributions itself, in the order CpuOps adds
// them (keys ascending along a query row, queries ascending for a key): a gather, deterministic without atomics.
// The keys a query sees are a prefix [0, visible) of its sequence, so masked keys are skipped, never read.
//
// Forward: one thread per query row (b, h, i) writes that row of probs, using it as scratch for the scores; then one
// thread per element of out sums probs · v over the row's visible keys.
// Backward: one thread per query row writes the row's score gradients ds_ij / √hd to a scratch the size of probs;
// then one thread per element of dq sums over the row's keys, and one thread per element of dk and dv sums over the
// queries that see the key. Materialising ds keeps each of those threads to one multiply-add per contribution.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "gpu/cuda_kernel_math.hpp"
#include "gpu/ops.hpp"

namespace dtsim::gpu::kernels {

// AttentionShape's helpers are host-only and its key lengths live in host memory, so the kernels get this copy
// with the key lengths in the executor's memory (device memory on the GPU) and the score scale precomputed.
struct AttentionGeometry {
  int batch, seq, heads, head_dim;
  bool causal;
  const int32_t* key_lengths;  // `batch` values, or null when every key is valid
  float scale;                 // 1/√head_dim

  DTSIM_HOST_DEVICE int dim() const { return heads * head_dim; }
  DTSIM_HOST_DEVICE size_t query_rows() const { return static_cast<size_t>(batch) * heads * seq; }
  DTSIM_HOST_DEVICE size_t probs_size() const { return query_rows() * seq; }
  DTSIM_HOST_DEVICE size_t elements() const { return static_cast<size_t>(batch) * seq * dim(); }  // of q, k, v, out

  DTSIM_HOST_DEVICE int key_length(int b) const { return key_lengths ? key_lengths[b] : seq; }
  // Query i of sequence b sees keys [0, visible_keys(b, i)).
  DTSIM_HOST_DEVICE int visible_keys(int b, int i) const {
    const int length = key_length(b);
    return causal && i + 1 < length ? i + 1 : length;
  }
  // Key j of sequence b is seen by queries [first_query_seeing(b, j), seq): none when j is padding, all without
  // the causal mask, i ≥ j with it.
  DTSIM_HOST_DEVICE int first_query_seeing(int b, int j) const {
    if (j >= key_length(b)) return seq;
    return causal ? j : 0;
  }

  // Offset of head h of token t of sequence b in a (batch·seq) × dim matrix.
  DTSIM_HOST_DEVICE size_t token(int b, int t, int h) const {
    return (static_cast<size_t>(b) * seq + t) * dim() + static_cast<size_t>(h) * head_dim;
  }
  // Offset of the probs (or ds) row (b, h, i).
  DTSIM_HOST_DEVICE size_t probs_row(int b, int h, int i) const {
    return ((static_cast<size_t>(b) * heads + h) * seq + i) * seq;
  }
};

// `key_lengths` replaces shape.key_lengths: the same values, copied where the kernels can read them (or null).
inline AttentionGeometry attention_geometry(const AttentionShape& s, const int32_t* key_lengths) {
  return AttentionGeometry{s.batch,     s.seq, s.heads, s.head_dim, s.causal, key_lengths,
                           1.0f / std::sqrt(static_cast<float>(s.head_dim))};
}

// Element e of a (batch·seq) × dim matrix as (sequence b, token t, head h, index d within the head).
struct AttentionIndex {
  int b, t, h, d;
};

DTSIM_HOST_DEVICE inline AttentionIndex attention_index(const AttentionGeometry& g, size_t e) {
  const int dim = g.dim();
  const size_t row = e / dim;
  const int c = static_cast<int>(e % dim);
  return AttentionIndex{static_cast<int>(row / g.seq), static_cast<int>(row % g.seq), c / g.head_dim, c % g.head_dim};
}

// Query row r = (b·heads + h)·seq + i as (b, i, h); d is unused.
DTSIM_HOST_DEVICE inline AttentionIndex attention_query_row(const AttentionGeometry& g, size_t r) {
  const size_t bh = r / g.seq;
  return AttentionIndex{static_cast<int>(bh / g.heads), static_cast<int>(r % g.seq), static_cast<int>(bh % g.heads), 0};
}

DTSIM_HOST_DEVICE inline float head_dot(const float* a, const float* b, int n) {
  float acc = 0.0f;
  for (int d = 0; d < n; ++d) acc += a[d] * b[d];
  return acc;
}

// One index per query row: the softmax of the scaled scores over the visible keys, with the row maximum subtracted
// so that no exponent is positive, and exact zeros at the masked keys (an all-zero row when no key is visible).
struct AttentionProbsRow {
  const float* q;
  const float* k;
  float* probs;
  AttentionGeometry g;
  DTSIM_HOST_DEVICE void operator()(size_t r) const {
    const AttentionIndex x = attention_query_row(g, r);
    const int visible = g.visible_keys(x.b, x.t);
    const float* qi = q + g.token(x.b, x.t, x.h);
    float* p = probs + r * g.seq;
    float max_score = 0.0f;
    for (int j = 0; j < visible; ++j) {
      p[j] = head_dot(qi, k + g.token(x.b, j, x.h), g.head_dim) * g.scale;
      if (j == 0 || p[j] > max_score) max_score = p[j];
    }
    float sum = 0.0f;
    for (int j = 0; j < visible; ++j) {
      p[j] = expf(p[j] - max_score);
      sum += p[j];
    }
    for (int j = 0; j < visible; ++j) p[j] /= sum;
    for (int j = visible; j < g.seq; ++j) p[j] = 0.0f;
  }
};

// One index per element (b, i, h, d): Σ_j w_ij · rows_j[d] over the keys query i sees, w being one
// batch × heads × seq × seq row per query. The attention's output (w = probs, rows = v) and its query gradient
// (w = ds, rows = k) are both this sum.
struct AttentionWeightedRowsElement {
  const float* weights;
  const float* rows;
  float* out;
  AttentionGeometry g;
  DTSIM_HOST_DEVICE void operator()(size_t e) const {
    const AttentionIndex x = attention_index(g, e);
    const float* w = weights + g.probs_row(x.b, x.h, x.t);
    const int visible = g.visible_keys(x.b, x.t);
    float acc = 0.0f;
    for (int j = 0; j < visible; ++j) acc += w[j] * rows[g.token(x.b, j, x.h) + x.d];
    out[e] = acc;
  }
};

// One index per query row: ds_ij = p_ij·(dp_ij − Σ_j' p_ij' dp_ij') / √hd with dp_ij = dout_i·v_j, the gradient
// with respect to q_i·k_j itself (the scale folded in); zero at the masked keys.
struct AttentionScoreGradRow {
  const float* v;
  const float* probs;
  const float* dout;
  float* ds;
  AttentionGeometry g;
  DTSIM_HOST_DEVICE void operator()(size_t r) const {
    const AttentionIndex x = attention_query_row(g, r);
    const int visible = g.visible_keys(x.b, x.t);
    const float* p = probs + r * g.seq;
    const float* douti = dout + g.token(x.b, x.t, x.h);
    float* row = ds + r * g.seq;
    float weighted = 0.0f;
    for (int j = 0; j < visible; ++j) {
      row[j] = head_dot(douti, v + g.token(x.b, j, x.h), g.head_dim);  // dp_ij for now
      weighted += p[j] * row[j];
    }
    for (int j = 0; j < visible; ++j) row[j] = p[j] * (row[j] - weighted) * g.scale;
    for (int j = visible; j < g.seq; ++j) row[j] = 0.0f;
  }
};

// One index per element (b, j, h, d) of dk and dv: over the queries i that see key j,
// dk = Σ_i ds_ij · q_i[d] and dv = Σ_i p_ij · dout_i[d]. Zero for a padding key.
struct AttentionKeyValueGradElement {
  const float* ds;
  const float* probs;
  const float* q;
  const float* dout;
  float* dk;
  float* dv;
  AttentionGeometry g;
  DTSIM_HOST_DEVICE void operator()(size_t e) const {
    const AttentionIndex x = attention_index(g, e);
    const int j = x.t;
    float dk_acc = 0.0f;
    float dv_acc = 0.0f;
    for (int i = g.first_query_seeing(x.b, j); i < g.seq; ++i) {
      const size_t at = g.probs_row(x.b, x.h, i) + j;
      const size_t qi = g.token(x.b, i, x.h) + x.d;
      dk_acc += ds[at] * q[qi];
      dv_acc += probs[at] * dout[qi];
    }
    dk[e] = dk_acc;
    dv[e] = dv_acc;
  }
};

// ---- the sequence of kernels ------------------------------------------------------------------------------------

template <class Exec>
void attention_forward_plan(Exec& exec, const AttentionGeometry& g, const float* q, const float* k, const float* v,
                            float* probs, float* out) {
  exec.for_each(g.query_rows(), AttentionProbsRow{q, k, probs, g}, "attention_forward probabilities");
  exec.for_each(g.elements(), AttentionWeightedRowsElement{probs, v, out, g}, "attention_forward output");
}

// `ds` is scratch of g.probs_size() elements.
template <class Exec>
void attention_backward_plan(Exec& exec, const AttentionGeometry& g, const float* q, const float* k, const float* v,
                             const float* probs, const float* dout, float* dq, float* dk, float* dv, float* ds) {
  exec.for_each(g.query_rows(), AttentionScoreGradRow{v, probs, dout, ds, g}, "attention_backward score gradients");
  exec.for_each(g.elements(), AttentionWeightedRowsElement{ds, k, dq, g}, "attention_backward dq");
  exec.for_each(g.elements(), AttentionKeyValueGradElement{ds, probs, q, dout, dk, dv, g},
                "attention_backward dk and dv");
}

// Rotary position embedding: one thread per pair (x[2m], x[2m+1]) of one head of one token, turning it by
// sign · t · base^(−2m/head_dim) in double, as CpuOps does. Pair index e counts the (batch·seq) × dim matrix's
// pairs in storage order.
struct RotaryPair {
  float* x;
  AttentionGeometry g;
  double base;
  int sign;  // +1 forward, −1 inverse
  DTSIM_HOST_DEVICE void operator()(size_t e) const {
    const AttentionIndex at = attention_index(g, 2 * e);
    const int m = at.d / 2;
    const double angle = sign * at.t * pow(base, -2.0 * m / g.head_dim);
    const double c = cos(angle), s = sin(angle);
    float* pair = x + 2 * e;
    const double x0 = pair[0], x1 = pair[1];
    pair[0] = static_cast<float>(x0 * c - x1 * s);
    pair[1] = static_cast<float>(x0 * s + x1 * c);
  }
};

}  // namespace dtsim::gpu::kernels
