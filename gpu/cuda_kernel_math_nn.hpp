// Per-thread logic of the CUDA convolution, pooling, layer norm and embedding kernels, compiled for host and
// device (see cuda_kernel_math.hpp for why). Every op that could race is written as a *gather*: each output
// element is produced by exactly one thread, which reads everything that contributes to it in a fixed order.
// That keeps the results deterministic without atomics.
#pragma once

#include <cstddef>
#include <vector>

#include "gpu/cuda_kernel_math.hpp"
#include "gpu/ops.hpp"

namespace dtsim::gpu::kernels {

// ---- convolution ---------------------------------------------------------------------------------------------
// ConvShape's helpers are host-only, so the kernels get this plain copy with the derived sizes filled in.
struct ConvGeometry {
  int channels, height, width;
  int out_channels, kernel_h, kernel_w, stride, pad;
  int out_h, out_w;
  DTSIM_HOST_DEVICE int patch_size() const { return channels * kernel_h * kernel_w; }
  DTSIM_HOST_DEVICE int positions() const { return out_h * out_w; }  // columns of one sample's im2col matrix
  DTSIM_HOST_DEVICE size_t input_size() const { return static_cast<size_t>(channels) * height * width; }
  DTSIM_HOST_DEVICE size_t output_size() const { return static_cast<size_t>(out_channels) * positions(); }
  DTSIM_HOST_DEVICE size_t col_size() const { return static_cast<size_t>(patch_size()) * positions(); }
};

inline ConvGeometry conv_geometry(const ConvShape& s) {
  return ConvGeometry{s.in_channels, s.height, s.width, s.out_channels, s.kernel_h, s.kernel_w,
                      s.stride,      s.pad,    s.out_h(), s.out_w()};
}

// Samples whose im2col matrices fit together in a scratch of `limit` elements (at least one, at most the batch):
// the conv ops process the batch in chunks of this many, one batched GEMM per chunk.
DTSIM_HOST_DEVICE inline int conv_samples_per_chunk(size_t col_size, int batch, size_t limit) {
  const size_t fit = col_size == 0 ? static_cast<size_t>(batch) : limit / col_size;
  if (fit < 1) return 1;
  return fit > static_cast<size_t>(batch) ? batch : static_cast<int>(fit);
}

// Element (p, l) of one sample's im2col matrix (patch_size × positions): p = (c·kernel_h + ki)·kernel_w + kj
// names a kernel tap, l = oy·out_w + ox an output position; padding reads as zero.
DTSIM_HOST_DEVICE inline float im2col_element(const float* x_sample, const ConvGeometry& g, int p, int l) {
  const int taps = g.kernel_h * g.kernel_w;
  const int c = p / taps;
  const int ki = (p % taps) / g.kernel_w;
  const int kj = p % g.kernel_w;
  const int iy = (l / g.out_w) * g.stride - g.pad + ki;
  const int ix = (l % g.out_w) * g.stride - g.pad + kj;
  if (iy < 0 || iy >= g.height || ix < 0 || ix >= g.width) return 0.0f;
  return x_sample[(static_cast<size_t>(c) * g.height + iy) * g.width + ix];
}

// The transpose of im2col for one input pixel: the sum of every im2col entry that was read from (c, iy, ix),
// taps in (ki, kj) order. A tap contributes when iy = oy·stride − pad + ki for an output row oy in range.
DTSIM_HOST_DEVICE inline float col2im_element(const float* col_sample, const ConvGeometry& g, int c, int iy, int ix) {
  float acc = 0.0f;
  for (int ki = 0; ki < g.kernel_h; ++ki) {
    const int ty = iy + g.pad - ki;
    if (ty < 0 || ty % g.stride != 0 || ty / g.stride >= g.out_h) continue;
    const int oy = ty / g.stride;
    for (int kj = 0; kj < g.kernel_w; ++kj) {
      const int tx = ix + g.pad - kj;
      if (tx < 0 || tx % g.stride != 0 || tx / g.stride >= g.out_w) continue;
      const int ox = tx / g.stride;
      const int p = (c * g.kernel_h + ki) * g.kernel_w + kj;
      acc += col_sample[static_cast<size_t>(p) * g.positions() + oy * g.out_w + ox];
    }
  }
  return acc;
}

// im2col of samples first_sample … first_sample + n − 1 into consecutive matrices of `col`; one index per entry.
struct Im2colChunk {
  const float* x;
  float* col;
  ConvGeometry g;
  int first_sample;
  DTSIM_HOST_DEVICE void operator()(size_t i) const {
    const size_t per_sample = g.col_size();
    const size_t s = i / per_sample;
    const size_t rest = i % per_sample;
    const int p = static_cast<int>(rest / g.positions());
    const int l = static_cast<int>(rest % g.positions());
    col[i] = im2col_element(x + (first_sample + s) * g.input_size(), g, p, l);
  }
};

// col2im of a chunk's consecutive im2col gradients into dx (overwriting it); one index per input element.
struct Col2imChunk {
  const float* col;
  float* dx;
  ConvGeometry g;
  int first_sample;
  DTSIM_HOST_DEVICE void operator()(size_t i) const {
    const size_t per_sample = g.input_size();
    const size_t s = i / per_sample;
    const size_t rest = i % per_sample;
    const int plane = g.height * g.width;
    const int c = static_cast<int>(rest / plane);
    const int iy = static_cast<int>(rest % plane) / g.width;
    const int ix = static_cast<int>(rest % plane) % g.width;
    dx[(first_sample + s) * per_sample + rest] = col2im_element(col + s * g.col_size(), g, c, iy, ix);
  }
};

// y[n, oc, l] += bias[oc] over the whole output; one index per element.
struct AddChannelBiasElement {
  float* y;
  const float* bias;
  int out_channels;
  int positions;
  DTSIM_HOST_DEVICE void operator()(size_t i) const { y[i] += bias[(i / positions) % out_channels]; }
};

// One thread's slice of dbias[oc] = Σ over samples and positions of dy[n, oc, l] (one block per channel).
struct ChannelGradTerm {
  using Acc = double;
  const float* dy;
  int out_channels;
  int positions;
  int channel;
  DTSIM_HOST_DEVICE double operator()(size_t e) const {
    const size_t n = e / positions;
    const size_t l = e % positions;
    return dy[(n * out_channels + channel) * positions + l];
  }
};

// ---- pooling (square windows, no padding) ---------------------------------------------------------------------
struct PoolGeometry {
  int height, width, kernel, stride, out_h, out_w;
  DTSIM_HOST_DEVICE int in_plane() const { return height * width; }
  DTSIM_HOST_DEVICE int out_plane() const { return out_h * out_w; }
};

inline PoolGeometry pool_geometry(const PoolShape& s) {
  return PoolGeometry{s.height, s.width, s.kernel, s.stride, s.out_h(), s.out_w()};
}

// The windows along one axis that cover input coordinate i: o·stride ≤ i < o·stride + kernel.
DTSIM_HOST_DEVICE inline int first_covering_window(int i, int kernel, int stride) {
  return i < kernel ? 0 : (i - kernel) / stride + 1;
}
DTSIM_HOST_DEVICE inline int last_covering_window(int i, int stride, int windows) {
  const int o = i / stride;
  return o < windows ? o : windows - 1;
}

// Max over window (oy, ox) of one channel plane, scanning in row-major order and keeping the first maximum.
DTSIM_HOST_DEVICE inline float max_pool_window(const float* plane, const PoolGeometry& g, int oy, int ox) {
  const float* corner = plane + static_cast<size_t>(oy) * g.stride * g.width + ox * g.stride;
  float best = corner[0];
  for (int ky = 0; ky < g.kernel; ++ky)
    for (int kx = 0; kx < g.kernel; ++kx)
      if (corner[ky * g.width + kx] > best) best = corner[ky * g.width + kx];
  return best;
}

DTSIM_HOST_DEVICE inline float avg_pool_window(const float* plane, const PoolGeometry& g, int oy, int ox) {
  const float* corner = plane + static_cast<size_t>(oy) * g.stride * g.width + ox * g.stride;
  float acc = 0.0f;
  for (int ky = 0; ky < g.kernel; ++ky)
    for (int kx = 0; kx < g.kernel; ++kx) acc += corner[ky * g.width + kx];
  return acc / static_cast<float>(g.kernel * g.kernel);
}

// Position (iy·width + ix in the plane) of the first element of window (oy, ox), in row-major order, equal to the
// window's forward output; −1 when none is (a NaN output).
DTSIM_HOST_DEVICE inline int max_pool_argmax(const float* plane, const PoolGeometry& g, int oy, int ox, float y) {
  for (int ky = 0; ky < g.kernel; ++ky)
    for (int kx = 0; kx < g.kernel; ++kx) {
      const int pos = (oy * g.stride + ky) * g.width + ox * g.stride + kx;
      if (plane[pos] == y) return pos;
    }
  return -1;
}

// One index per output: n, c, oy, ox.
struct MaxPoolForwardElement {
  const float* x;
  float* y;
  PoolGeometry g;
  DTSIM_HOST_DEVICE void operator()(size_t i) const {
    const size_t plane = i / g.out_plane();
    const int o = static_cast<int>(i % g.out_plane());
    y[i] = max_pool_window(x + plane * g.in_plane(), g, o / g.out_w, o % g.out_w);
  }
};

struct AvgPoolForwardElement {
  const float* x;
  float* y;
  PoolGeometry g;
  DTSIM_HOST_DEVICE void operator()(size_t i) const {
    const size_t plane = i / g.out_plane();
    const int o = static_cast<int>(i % g.out_plane());
    y[i] = avg_pool_window(x + plane * g.in_plane(), g, o / g.out_w, o % g.out_w);
  }
};

// One index per input element: it collects dy from every window covering it whose first maximum it is, windows in
// (oy, ox) order, which is the order a scatter over outputs would add them in.
struct MaxPoolBackwardElement {
  const float* x;
  const float* y;
  const float* dy;
  float* dx;
  PoolGeometry g;
  DTSIM_HOST_DEVICE void operator()(size_t i) const {
    const size_t plane = i / g.in_plane();
    const int pos = static_cast<int>(i % g.in_plane());
    const int iy = pos / g.width;
    const int ix = pos % g.width;
    const float* x_plane = x + plane * g.in_plane();
    const size_t out_base = plane * g.out_plane();
    float acc = 0.0f;
    for (int oy = first_covering_window(iy, g.kernel, g.stride); oy <= last_covering_window(iy, g.stride, g.out_h); ++oy)
      for (int ox = first_covering_window(ix, g.kernel, g.stride); ox <= last_covering_window(ix, g.stride, g.out_w);
           ++ox) {
        const size_t o = out_base + oy * g.out_w + ox;
        if (max_pool_argmax(x_plane, g, oy, ox, y[o]) == pos) acc += dy[o];
      }
    dx[i] = acc;
  }
};

struct AvgPoolBackwardElement {
  const float* dy;
  float* dx;
  PoolGeometry g;
  DTSIM_HOST_DEVICE void operator()(size_t i) const {
    const size_t plane = i / g.in_plane();
    const int pos = static_cast<int>(i % g.in_plane());
    const int iy = pos / g.width;
    const int ix = pos % g.width;
    const float area = static_cast<float>(g.kernel * g.kernel);
    const float* dy_plane = dy + plane * g.out_plane();
    float acc = 0.0f;
    for (int oy = first_covering_window(iy, g.kernel, g.stride); oy <= last_covering_window(iy, g.stride, g.out_h); ++oy)
      for (int ox = first_covering_window(ix, g.kernel, g.stride); ox <= last_covering_window(ix, g.stride, g.out_w);
           ++ox)
        acc += dy_plane[oy * g.out_w + ox] / area;
    dx[i] = acc;
  }
};

// ---- layer norm (one block per row for the statistics and dx, one index per column for dgamma, dbeta) -------
// Statistics are accumulated in double: the mean first, then the centred squares (two passes, no cancellation).
struct RowStats {
  double mean;
  double inv_std;
};

struct DoublePair {
  double a, b;
  DTSIM_HOST_DEVICE DoublePair operator+(const DoublePair& o) const { return DoublePair{a + o.a, b + o.b}; }
};

DTSIM_HOST_DEVICE inline double strided_row_sum(const float* x, int cols, int first, int step) {
  double acc = 0.0;
  for (int j = first; j < cols; j += step) acc += x[j];
  return acc;
}

DTSIM_HOST_DEVICE inline double strided_centered_squares(const float* x, int cols, double mean, int first, int step) {
  double acc = 0.0;
  for (int j = first; j < cols; j += step) {
    const double d = x[j] - mean;
    acc += d * d;
  }
  return acc;
}

DTSIM_HOST_DEVICE inline double row_mean(double sum, int cols) { return sum / cols; }

DTSIM_HOST_DEVICE inline RowStats row_stats(double mean, double centered_squares, int cols, float eps) {
  return RowStats{mean, 1.0 / sqrt(centered_squares / cols + static_cast<double>(eps))};
}

DTSIM_HOST_DEVICE inline float layer_norm_output(float x, RowStats s, float gamma, float beta) {
  return static_cast<float>((x - s.mean) * s.inv_std * gamma + beta);
}

// With x̂ = (x − mean)·inv_std and g = dy·gamma: a = Σ g, b = Σ g·x̂ over the row.
DTSIM_HOST_DEVICE inline DoublePair strided_norm_grad_sums(const float* x, const float* dy, const float* gamma, int cols,
                                                           RowStats s, int first, int step) {
  DoublePair acc{0.0, 0.0};
  for (int j = first; j < cols; j += step) {
    const double g = static_cast<double>(dy[j]) * gamma[j];
    acc.a += g;
    acc.b += g * (x[j] - s.mean) * s.inv_std;
  }
  return acc;
}

// dx = inv_std · (g − mean(g) − x̂ · mean(g·x̂)), the gradient through the mean and the variance included.
DTSIM_HOST_DEVICE inline float layer_norm_input_grad(float x, float dy, float gamma, RowStats s, DoublePair sums,
                                                     int cols) {
  const double x_hat = (x - s.mean) * s.inv_std;
  const double g = static_cast<double>(dy) * gamma;
  return static_cast<float>(s.inv_std * (g - sums.a / cols - x_hat * (sums.b / cols)));
}

// dgamma[j] = Σ_r dy·x̂, dbeta[j] = Σ_r dy, rows in order.
struct LayerNormParamGradsColumn {
  const float* x;
  const float* dy;
  const RowStats* stats;
  int rows;
  int cols;
  float* dgamma;
  float* dbeta;
  DTSIM_HOST_DEVICE void operator()(size_t j) const {
    double dg = 0.0;
    double db = 0.0;
    for (int r = 0; r < rows; ++r) {
      const size_t k = static_cast<size_t>(r) * cols + j;
      dg += static_cast<double>(dy[k]) * (x[k] - stats[r].mean) * stats[r].inv_std;
      db += dy[k];
    }
    dgamma[j] = static_cast<float>(dg);
    dbeta[j] = static_cast<float>(db);
  }
};

// ---- embedding ------------------------------------------------------------------------------------------------
// The table row an id selects, or −1 for an id outside [0, vocab) (NaN included). Ids are integral floats.
DTSIM_HOST_DEVICE inline int embedding_row(float id, int vocab) {
  if (!(id >= 0.0f && id < static_cast<float>(vocab))) return -1;
  return static_cast<int>(id);
}

struct EmbeddingForwardElement {
  const float* ids;
  const float* table;
  float* out;
  int vocab;
  int dim;
  DTSIM_HOST_DEVICE void operator()(size_t i) const {
    const int v = embedding_row(ids[i / dim], vocab);
    out[i] = v < 0 ? 0.0f : table[static_cast<size_t>(v) * dim + i % dim];
  }
};

// Rows grouped by the table row they select, in row order: rows of table row v are
// order[offsets[v]] … order[offsets[v + 1] − 1]. Built on the host from the downloaded ids (they are few); it
// lets every (v, d) gradient be summed by one thread, in row order, with no atomics.
struct RowsById {
  std::vector<int> offsets;  // vocab + 1
  std::vector<int> order;    // rows with a valid id
};

inline RowsById group_rows_by_id(const float* ids, int rows, int vocab) {
  RowsById g;
  g.offsets.assign(static_cast<size_t>(vocab) + 1, 0);
  for (int r = 0; r < rows; ++r) {
    const int v = embedding_row(ids[r], vocab);
    if (v >= 0) ++g.offsets[v + 1];
  }
  for (int v = 0; v < vocab; ++v) g.offsets[v + 1] += g.offsets[v];
  g.order.resize(static_cast<size_t>(g.offsets[vocab]));
  std::vector<int> next(g.offsets.begin(), g.offsets.end() - 1);
  for (int r = 0; r < rows; ++r) {
    const int v = embedding_row(ids[r], vocab);
    if (v >= 0) g.order[next[v]++] = r;
  }
  return g;
}

// One index per table entry (v, d): dtable = Σ of dout[r, d] over the rows that chose v, in row order.
struct EmbeddingBackwardElement {
  const int* offsets;
  const int* order;
  const float* dout;
  float* dtable;
  int dim;
  DTSIM_HOST_DEVICE void operator()(size_t i) const {
    const size_t v = i / dim;
    const size_t d = i % dim;
    float acc = 0.0f;
    for (int k = offsets[v]; k < offsets[v + 1]; ++k) acc += dout[static_cast<size_t>(order[k]) * dim + d];
    dtable[i] = acc;
  }
};

}  // namespace dtsim::gpu::kernels
