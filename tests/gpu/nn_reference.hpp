// Naive implementations of the convolution, pooling, layer norm and embedding contracts of gpu/ops.hpp, written
// straight from the comments there: plain loops, double accumulation, and scatters where the CUDA kernels gather,
// so that they share no index arithmetic with the code under test.
#pragma once

#include <cmath>
#include <vector>

#include "gpu/ops.hpp"

namespace dtsim::gpu::nn_reference {

inline std::vector<float> to_float(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

inline std::vector<float> conv2d_forward(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& w,
                                         const float* bias) {
  const int oh = s.out_h(), ow = s.out_w();
  std::vector<double> y(static_cast<size_t>(s.batch) * s.out_channels * oh * ow);
  for (int n = 0; n < s.batch; ++n)
    for (int oc = 0; oc < s.out_channels; ++oc)
      for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < ow; ++ox) {
          double acc = bias ? bias[oc] : 0.0;
          for (int c = 0; c < s.in_channels; ++c)
            for (int ki = 0; ki < s.kernel_h; ++ki)
              for (int kj = 0; kj < s.kernel_w; ++kj) {
                const int iy = oy * s.stride - s.pad + ki, ix = ox * s.stride - s.pad + kj;
                if (iy < 0 || iy >= s.height || ix < 0 || ix >= s.width) continue;
                acc += static_cast<double>(x[((n * s.in_channels + c) * s.height + iy) * s.width + ix]) *
                       w[((oc * s.in_channels + c) * s.kernel_h + ki) * s.kernel_w + kj];
              }
          y[((n * s.out_channels + oc) * oh + oy) * ow + ox] = acc;
        }
  return to_float(y);
}

struct ConvGrads {
  std::vector<float> dx, dw, dbias;
};

inline ConvGrads conv2d_backward(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& w,
                                 const std::vector<float>& dy) {
  const int oh = s.out_h(), ow = s.out_w();
  std::vector<double> dx(x.size()), dw(w.size()), dbias(static_cast<size_t>(s.out_channels));
  for (int n = 0; n < s.batch; ++n)
    for (int oc = 0; oc < s.out_channels; ++oc)
      for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < ow; ++ox) {
          const double g = dy[((n * s.out_channels + oc) * oh + oy) * ow + ox];
          dbias[oc] += g;
          for (int c = 0; c < s.in_channels; ++c)
            for (int ki = 0; ki < s.kernel_h; ++ki)
              for (int kj = 0; kj < s.kernel_w; ++kj) {
                const int iy = oy * s.stride - s.pad + ki, ix = ox * s.stride - s.pad + kj;
                if (iy < 0 || iy >= s.height || ix < 0 || ix >= s.width) continue;
                const size_t xi = ((n * s.in_channels + c) * s.height + iy) * s.width + ix;
                const size_t wi = ((oc * s.in_channels + c) * s.kernel_h + ki) * s.kernel_w + kj;
                dw[wi] += g * x[xi];
                dx[xi] += g * w[wi];
              }
        }
  return ConvGrads{to_float(dx), to_float(dw), to_float(dbias)};
}

inline size_t pool_out_size(const PoolShape& s) {
  return static_cast<size_t>(s.batch) * s.channels * s.out_h() * s.out_w();
}

// Visits every window: f(plane_offset_in, plane_offset_out, oy, ox).
template <class F>
void for_each_window(const PoolShape& s, F f) {
  for (int p = 0; p < s.batch * s.channels; ++p)
    for (int oy = 0; oy < s.out_h(); ++oy)
      for (int ox = 0; ox < s.out_w(); ++ox)
        f(static_cast<size_t>(p) * s.height * s.width, static_cast<size_t>(p) * s.out_h() * s.out_w(), oy, ox);
}

inline std::vector<float> max_pool_forward(const PoolShape& s, const std::vector<float>& x) {
  std::vector<float> y(pool_out_size(s));
  for_each_window(s, [&](size_t in, size_t out, int oy, int ox) {
    float best = -INFINITY;
    for (int ky = 0; ky < s.kernel; ++ky)
      for (int kx = 0; kx < s.kernel; ++kx) best = std::max(best, x[in + (oy * s.stride + ky) * s.width + ox * s.stride + kx]);
    y[out + oy * s.out_w() + ox] = best;
  });
  return y;
}

// Each window's dy goes to its first position (row-major) whose x equals y; windows in order.
inline std::vector<float> max_pool_backward(const PoolShape& s, const std::vector<float>& x, const std::vector<float>& y,
                                            const std::vector<float>& dy) {
  std::vector<float> dx(x.size(), 0.0f);
  for_each_window(s, [&](size_t in, size_t out, int oy, int ox) {
    const size_t o = out + oy * s.out_w() + ox;
    for (int k = 0; k < s.kernel * s.kernel; ++k) {
      const size_t i = in + (oy * s.stride + k / s.kernel) * s.width + ox * s.stride + k % s.kernel;
      if (x[i] == y[o]) {
        dx[i] += dy[o];
        return;
      }
    }
  });
  return dx;
}

inline std::vector<float> avg_pool_forward(const PoolShape& s, const std::vector<float>& x) {
  std::vector<float> y(pool_out_size(s));
  for_each_window(s, [&](size_t in, size_t out, int oy, int ox) {
    double acc = 0.0;
    for (int ky = 0; ky < s.kernel; ++ky)
      for (int kx = 0; kx < s.kernel; ++kx) acc += x[in + (oy * s.stride + ky) * s.width + ox * s.stride + kx];
    y[out + oy * s.out_w() + ox] = static_cast<float>(acc / (s.kernel * s.kernel));
  });
  return y;
}

inline std::vector<float> avg_pool_backward(const PoolShape& s, const std::vector<float>& dy) {
  std::vector<double> dx(static_cast<size_t>(s.batch) * s.channels * s.height * s.width, 0.0);
  for_each_window(s, [&](size_t in, size_t out, int oy, int ox) {
    const double g = dy[out + oy * s.out_w() + ox] / static_cast<double>(s.kernel * s.kernel);
    for (int ky = 0; ky < s.kernel; ++ky)
      for (int kx = 0; kx < s.kernel; ++kx) dx[in + (oy * s.stride + ky) * s.width + ox * s.stride + kx] += g;
  });
  return to_float(dx);
}

inline std::vector<float> layer_norm_forward(const std::vector<float>& x, const std::vector<float>& gamma,
                                             const std::vector<float>& beta, int rows, int cols, float eps) {
  std::vector<float> y(x.size());
  for (int r = 0; r < rows; ++r) {
    const float* row = &x[static_cast<size_t>(r) * cols];
    double mean = 0.0, var = 0.0;
    for (int j = 0; j < cols; ++j) mean += row[j];
    mean /= cols;
    for (int j = 0; j < cols; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= cols;
    for (int j = 0; j < cols; ++j)
      y[static_cast<size_t>(r) * cols + j] =
          static_cast<float>((row[j] - mean) / std::sqrt(var + eps) * gamma[j] + beta[j]);
  }
  return y;
}

struct LayerNormGrads {
  std::vector<float> dx, dgamma, dbeta;
};

// The textbook derivation: with x̂ = (x − μ)/σ, dx̂ = dy·γ, dσ² = Σ dx̂·(x − μ)·(−½)σ⁻³, dμ = Σ −dx̂/σ (the dσ² term
// through μ vanishes since Σ(x − μ) = 0), dx = dx̂/σ + dσ²·2(x − μ)/n + dμ/n.
inline LayerNormGrads layer_norm_backward(const std::vector<float>& x, const std::vector<float>& gamma,
                                          const std::vector<float>& dy, int rows, int cols, float eps) {
  std::vector<double> dx(x.size()), dgamma(static_cast<size_t>(cols)), dbeta(static_cast<size_t>(cols));
  for (int r = 0; r < rows; ++r) {
    const size_t o = static_cast<size_t>(r) * cols;
    double mean = 0.0, var = 0.0;
    for (int j = 0; j < cols; ++j) mean += x[o + j];
    mean /= cols;
    for (int j = 0; j < cols; ++j) var += (x[o + j] - mean) * (x[o + j] - mean);
    var /= cols;
    const double sigma = std::sqrt(var + eps);
    double dvar = 0.0, dmean = 0.0;
    for (int j = 0; j < cols; ++j) {
      const double dxhat = static_cast<double>(dy[o + j]) * gamma[j];
      dvar += dxhat * (x[o + j] - mean) * -0.5 / (sigma * sigma * sigma);
      dmean += -dxhat / sigma;
      dgamma[j] += dy[o + j] * (x[o + j] - mean) / sigma;
      dbeta[j] += dy[o + j];
    }
    for (int j = 0; j < cols; ++j) {
      const double dxhat = static_cast<double>(dy[o + j]) * gamma[j];
      dx[o + j] = dxhat / sigma + dvar * 2.0 * (x[o + j] - mean) / cols + dmean / cols;
    }
  }
  return LayerNormGrads{to_float(dx), to_float(dgamma), to_float(dbeta)};
}

inline bool valid_id(float id, int vocab) { return id >= 0.0f && id < static_cast<float>(vocab); }

inline std::vector<float> embedding_forward(const std::vector<float>& ids, const std::vector<float>& table, int dim,
                                            int vocab) {
  std::vector<float> out(ids.size() * dim, 0.0f);
  for (size_t r = 0; r < ids.size(); ++r)
    if (valid_id(ids[r], vocab))
      for (int d = 0; d < dim; ++d) out[r * dim + d] = table[static_cast<size_t>(ids[r]) * dim + d];
  return out;
}

// Summed in row order in float, as the contract says: the result is exact to the bit.
inline std::vector<float> embedding_backward(const std::vector<float>& ids, const std::vector<float>& dout, int dim,
                                             int vocab) {
  std::vector<float> dtable(static_cast<size_t>(vocab) * dim, 0.0f);
  for (size_t r = 0; r < ids.size(); ++r)
    if (valid_id(ids[r], vocab))
      for (int d = 0; d < dim; ++d) dtable[static_cast<size_t>(ids[r]) * dim + d] += dout[r * dim + d];
  return dtable;
}

}  // namespace dtsim::gpu::nn_reference
