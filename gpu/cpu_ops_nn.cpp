// Convolution, pooling, layer norm and embedding for the CPU reference backend.
//
// Convolution is im2col + GEMM, one sample at a time: each sample's patches are laid out as the columns of
// a patch_size × (out_h·out_w) matrix and one GEMM with the kernel matrix gives that sample's output, in
// NCHW order, with no reordering. Batching several samples into one wider GEMM (chunks of up to 2M im2col
// elements) was measured and was not faster: on the FedAvg CNN's shapes, batch 64, float, one Xeon core,
// the 1→32 conv took about 2 ms forward and 4 ms backward either way, and the 32→64 conv 15–18 ms forward
// either way but 28–31 ms backward per sample against 33–37 ms batched, which also needs the GEMM output
// transposed back to NCHW and a scratch 14 times larger. The sample is first copied into a zero-padded
// image so that im2col and its adjoint are branch-free copies (with bounds checks in the inner loop,
// im2col and its memsets took about 15 % of a CNN training step; this and the row-wise max pooling below
// brought a batch-64 step from about 81 to 75 ms). Everything runs on the calling thread and every sum
// runs in a fixed order, so the results depend only on the inputs.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "gpu/cpu_ops.hpp"

namespace dtsim::gpu {
namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("cpu backend: ") + what);
}

void validate(const ConvShape& s) {
  require(s.batch > 0 && s.in_channels > 0 && s.height > 0 && s.width > 0 && s.out_channels > 0,
          "conv2d: sizes must be positive");
  require(s.kernel_h > 0 && s.kernel_w > 0 && s.stride > 0 && s.pad >= 0, "conv2d: bad kernel, stride or padding");
  require(s.height + 2 * s.pad >= s.kernel_h && s.width + 2 * s.pad >= s.kernel_w,
          "conv2d: kernel larger than the padded input");
}

void validate(const PoolShape& s) {
  require(s.batch > 0 && s.channels > 0 && s.kernel > 0 && s.stride > 0, "pool: sizes must be positive");
  require(s.height >= s.kernel && s.width >= s.kernel, "pool: window larger than the input");
}

size_t positions(const ConvShape& s) { return static_cast<size_t>(s.out_h()) * s.out_w(); }
size_t image_size(const ConvShape& s) { return static_cast<size_t>(s.in_channels) * s.height * s.width; }

size_t padded_size(const ConvShape& s) {
  return static_cast<size_t>(s.in_channels) * (s.height + 2 * s.pad) * (s.width + 2 * s.pad);
}

// Copies one sample x (C × H × W) into xpad (C × (H + 2·pad) × (W + 2·pad)) with a zero border, so that
// im2col reads every patch without bounds checks.
template <class T>
void pad_image(const ConvShape& s, const T* x, T* xpad) {
  const int hp = s.height + 2 * s.pad, wp = s.width + 2 * s.pad;
  std::fill(xpad, xpad + padded_size(s), T(0));
  for (int c = 0; c < s.in_channels; ++c)
    for (int y = 0; y < s.height; ++y) {
      const T* src = x + (static_cast<size_t>(c) * s.height + y) * s.width;
      std::copy(src, src + s.width, xpad + (static_cast<size_t>(c) * hp + y + s.pad) * wp + s.pad);
    }
}

// col (patch_size × out_h·out_w, row-major) of one padded sample: row (c, i, j), column (oy, ox) holds
// xpad[c, oy·stride + i, ox·stride + j], i.e. x[c, oy·stride − pad + i, ox·stride − pad + j] or 0.
template <class T>
void im2col(const ConvShape& s, const T* xpad, T* col) {
  const int oh = s.out_h(), ow = s.out_w(), hp = s.height + 2 * s.pad, wp = s.width + 2 * s.pad;
  T* dst = col;
  for (int c = 0; c < s.in_channels; ++c)
    for (int i = 0; i < s.kernel_h; ++i)
      for (int j = 0; j < s.kernel_w; ++j)
        for (int oy = 0; oy < oh; ++oy, dst += ow) {
          const T* src = xpad + (static_cast<size_t>(c) * hp + oy * s.stride + i) * wp + j;
          if (s.stride == 1) {  // the common case, contiguous: vectorised
            for (int ox = 0; ox < ow; ++ox) dst[ox] = src[ox];
          } else {
            for (int ox = 0; ox < ow; ++ox) dst[ox] = src[ox * s.stride];
          }
        }
}

// The adjoint of im2col into a padded gradient: every entry of col is added to the position it was copied
// from, in col's row order. dxpad must be zeroed by the caller; its border is discarded afterwards.
template <class T>
void col2im(const ConvShape& s, const T* col, T* dxpad) {
  const int oh = s.out_h(), ow = s.out_w(), hp = s.height + 2 * s.pad, wp = s.width + 2 * s.pad;
  const T* src = col;
  for (int c = 0; c < s.in_channels; ++c)
    for (int i = 0; i < s.kernel_h; ++i)
      for (int j = 0; j < s.kernel_w; ++j)
        for (int oy = 0; oy < oh; ++oy, src += ow) {
          T* dst = dxpad + (static_cast<size_t>(c) * hp + oy * s.stride + i) * wp + j;
          if (s.stride == 1) {
            for (int ox = 0; ox < ow; ++ox) dst[ox] += src[ox];
          } else {
            for (int ox = 0; ox < ow; ++ox) dst[ox * s.stride] += src[ox];
          }
        }
}

// The interior of a padded gradient, written to dx (C × H × W).
template <class T>
void unpad_image(const ConvShape& s, const T* xpad, T* x) {
  const int hp = s.height + 2 * s.pad, wp = s.width + 2 * s.pad;
  for (int c = 0; c < s.in_channels; ++c)
    for (int y = 0; y < s.height; ++y) {
      const T* src = xpad + (static_cast<size_t>(c) * hp + y + s.pad) * wp + s.pad;
      std::copy(src, src + s.width, x + (static_cast<size_t>(c) * s.height + y) * s.width);
    }
}

// Max pooling's comparison: a NaN in a window wins, so that a NaN in the activations shows in the output
// instead of being silently dropped. Written as a select so that the compiler can vectorise it.
template <class T>
T larger(T candidate, T best) {
  return candidate > best || std::isnan(candidate) ? candidate : best;
}

template <class T>
bool same_value(T a, T b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

}  // namespace

// ---- convolution ------------------------------------------------------------------------------------------

template <class T>
size_t CpuOps<T>::conv2d_scratch_size(const ConvShape& shape) {
  validate(shape);
  // One sample's im2col matrix, then one padded sample (the input forward, the input gradient backward).
  return static_cast<size_t>(shape.patch_size()) * positions(shape) + padded_size(shape);
}

template <class T>
void CpuOps<T>::conv2d_forward(const ConvShape& shape, const T* x, const T* w, const T* bias, T* y, T* scratch) {
  validate(shape);
  const int K = shape.patch_size(), C_out = shape.out_channels, P = static_cast<int>(positions(shape));
  T* col = scratch;
  T* padded = scratch + static_cast<size_t>(K) * P;
  for (int n = 0; n < shape.batch; ++n) {
    T* out = y + static_cast<size_t>(n) * C_out * P;
    pad_image(shape, x + n * image_size(shape), padded);
    im2col(shape, padded, col);
    this->gemm(Transpose::No, Transpose::No, T(1), {w, C_out, K}, {col, K, P}, T(0), {out, C_out, P});
    if (!bias) continue;
    for (int co = 0; co < C_out; ++co)
      for (int p = 0; p < P; ++p) out[static_cast<size_t>(co) * P + p] += bias[co];
  }
}

template <class T>
void CpuOps<T>::conv2d_backward(const ConvShape& shape, const T* x, const T* w, const T* dy, T* dx, T* dw,
                                T* dbias, T* scratch) {
  validate(shape);
  const int K = shape.patch_size(), C_out = shape.out_channels, P = static_cast<int>(positions(shape));
  T* col = scratch;
  T* padded = scratch + static_cast<size_t>(K) * P;
  if (dbias) std::fill(dbias, dbias + C_out, T(0));
  for (int n = 0; n < shape.batch; ++n) {
    const T* dout = dy + static_cast<size_t>(n) * C_out * P;
    if (dbias)
      for (int co = 0; co < C_out; ++co)
        for (int p = 0; p < P; ++p) dbias[co] += dout[static_cast<size_t>(co) * P + p];
    // dw (C_out × K) += dy_n · col_nᵀ, summed over the samples in order.
    pad_image(shape, x + n * image_size(shape), padded);
    im2col(shape, padded, col);
    this->gemm(Transpose::No, Transpose::Yes, T(1), {dout, C_out, P}, {col, K, P}, n == 0 ? T(0) : T(1),
               {dw, C_out, K});
    if (dx) {
      // dcol (K × P) = wᵀ · dy_n reuses the im2col buffer, then scatters back onto the sample's input.
      this->gemm(Transpose::Yes, Transpose::No, T(1), {w, C_out, K}, {dout, C_out, P}, T(0), {col, K, P});
      std::fill(padded, padded + padded_size(shape), T(0));
      col2im(shape, col, padded);
      unpad_image(shape, padded, dx + n * image_size(shape));
    }
  }
}

// ---- pooling ----------------------------------------------------------------------------------------------

template <class T>
void CpuOps<T>::max_pool_forward(const PoolShape& shape, const T* x, T* y) {
  validate(shape);
  const int oh = shape.out_h(), ow = shape.out_w(), k = shape.kernel, s = shape.stride;
  const size_t planes = static_cast<size_t>(shape.batch) * shape.channels;
  for (size_t q = 0; q < planes; ++q) {
    const T* in = x + q * shape.height * shape.width;
    for (int oy = 0; oy < oh; ++oy) {
      // A whole output row at once, window position by window position in row-major order.
      T* out = y + (q * oh + oy) * ow;
      const T* corner = in + static_cast<size_t>(oy * s) * shape.width;
      for (int ox = 0; ox < ow; ++ox) out[ox] = corner[ox * s];
      for (int i = 0; i < k; ++i)
        for (int j = 0; j < k; ++j) {
          const T* src = corner + static_cast<size_t>(i) * shape.width + j;
          for (int ox = 0; ox < ow; ++ox) out[ox] = larger(src[ox * s], out[ox]);
        }
    }
  }
}

template <class T>
void CpuOps<T>::max_pool_backward(const PoolShape& shape, const T* x, const T* y, const T* dy, T* dx) {
  validate(shape);
  const int oh = shape.out_h(), ow = shape.out_w(), k = shape.kernel, s = shape.stride;
  const size_t planes = static_cast<size_t>(shape.batch) * shape.channels;
  const size_t plane = static_cast<size_t>(shape.height) * shape.width;
  std::fill(dx, dx + planes * plane, T(0));
  for (size_t q = 0; q < planes; ++q) {
    const T* in = x + q * plane;
    T* din = dx + q * plane;
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        const size_t o = q * oh * ow + static_cast<size_t>(oy) * ow + ox;
        const size_t corner = static_cast<size_t>(oy * s) * shape.width + ox * s;
        // The first position in row-major scan order that holds the window's maximum takes the gradient.
        bool found = false;
        for (int i = 0; i < k && !found; ++i)
          for (int j = 0; j < k && !found; ++j) {
            const size_t pos = corner + static_cast<size_t>(i) * shape.width + j;
            if (same_value(in[pos], y[o])) {
              din[pos] += dy[o];
              found = true;
            }
          }
      }
  }
}

template <class T>
void CpuOps<T>::avg_pool_forward(const PoolShape& shape, const T* x, T* y) {
  validate(shape);
  const int oh = shape.out_h(), ow = shape.out_w(), k = shape.kernel, s = shape.stride;
  const size_t planes = static_cast<size_t>(shape.batch) * shape.channels;
  const T area = static_cast<T>(k * k);
  for (size_t q = 0; q < planes; ++q) {
    const T* in = x + q * shape.height * shape.width;
    T* out = y + q * oh * ow;
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        const T* window = in + static_cast<size_t>(oy * s) * shape.width + ox * s;
        T sum = T(0);
        for (int i = 0; i < k; ++i)
          for (int j = 0; j < k; ++j) sum += window[i * shape.width + j];
        out[oy * ow + ox] = sum / area;
      }
  }
}

template <class T>
void CpuOps<T>::avg_pool_backward(const PoolShape& shape, const T* dy, T* dx) {
  validate(shape);
  const int oh = shape.out_h(), ow = shape.out_w(), k = shape.kernel, s = shape.stride;
  const size_t planes = static_cast<size_t>(shape.batch) * shape.channels;
  const size_t plane = static_cast<size_t>(shape.height) * shape.width;
  const T area = static_cast<T>(k * k);
  std::fill(dx, dx + planes * plane, T(0));
  for (size_t q = 0; q < planes; ++q) {
    T* din = dx + q * plane;
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        const T share = dy[q * oh * ow + static_cast<size_t>(oy) * ow + ox] / area;
        T* window = din + static_cast<size_t>(oy * s) * shape.width + ox * s;
        for (int i = 0; i < k; ++i)
          for (int j = 0; j < k; ++j) window[i * shape.width + j] += share;
      }
  }
}

// ---- layer norm -------------------------------------------------------------------------------------------

namespace {

struct RowStats {
  double mean = 0.0;
  double inv_std = 0.0;  // 1 / sqrt(var + eps)
};

// Two passes in double: the mean, then the biased variance around it (no cancellation from E[x²] − E[x]²).
template <class T>
RowStats row_stats(const T* row, int cols, T eps) {
  RowStats st;
  for (int j = 0; j < cols; ++j) st.mean += static_cast<double>(row[j]);
  st.mean /= cols;
  double var = 0.0;
  for (int j = 0; j < cols; ++j) {
    const double d = static_cast<double>(row[j]) - st.mean;
    var += d * d;
  }
  var /= cols;
  st.inv_std = 1.0 / std::sqrt(var + static_cast<double>(eps));
  return st;
}

}  // namespace

template <class T>
void CpuOps<T>::layer_norm_forward(const T* x, const T* gamma, const T* beta, T* y, int rows, int cols, T eps) {
  require(rows >= 0 && cols > 0, "layer_norm: bad shape");
  for (int r = 0; r < rows; ++r) {
    const T* in = x + static_cast<size_t>(r) * cols;
    T* out = y + static_cast<size_t>(r) * cols;
    const RowStats st = row_stats(in, cols, eps);
    for (int j = 0; j < cols; ++j) {
      const double normalised = (static_cast<double>(in[j]) - st.mean) * st.inv_std;
      out[j] = static_cast<T>(normalised * static_cast<double>(gamma[j]) + static_cast<double>(beta[j]));
    }
  }
}

// With x̂ = (x − mean)·inv_std and g = dy·gamma: dx = inv_std · (g − mean(g) − x̂ · mean(g·x̂)),
// dgamma = Σ_rows dy·x̂, dbeta = Σ_rows dy.
template <class T>
void CpuOps<T>::layer_norm_backward(const T* x, const T* gamma, const T* dy, T* dx, T* dgamma, T* dbeta, int rows,
                                    int cols, T eps) {
  require(rows >= 0 && cols > 0, "layer_norm: bad shape");
  std::fill(dgamma, dgamma + cols, T(0));
  std::fill(dbeta, dbeta + cols, T(0));
  for (int r = 0; r < rows; ++r) {
    const T* in = x + static_cast<size_t>(r) * cols;
    const T* d = dy + static_cast<size_t>(r) * cols;
    const RowStats st = row_stats(in, cols, eps);
    double mean_g = 0.0, mean_g_xhat = 0.0;
    for (int j = 0; j < cols; ++j) {
      const double xhat = (static_cast<double>(in[j]) - st.mean) * st.inv_std;
      const double g = static_cast<double>(d[j]) * static_cast<double>(gamma[j]);
      mean_g += g;
      mean_g_xhat += g * xhat;
      dgamma[j] += static_cast<T>(static_cast<double>(d[j]) * xhat);
      dbeta[j] += d[j];
    }
    if (!dx) continue;
    mean_g /= cols;
    mean_g_xhat /= cols;
    T* out = dx + static_cast<size_t>(r) * cols;
    for (int j = 0; j < cols; ++j) {
      const double xhat = (static_cast<double>(in[j]) - st.mean) * st.inv_std;
      const double g = static_cast<double>(d[j]) * static_cast<double>(gamma[j]);
      out[j] = static_cast<T>(st.inv_std * (g - mean_g - xhat * mean_g_xhat));
    }
  }
}

// ---- embedding --------------------------------------------------------------------------------------------

namespace {

// The row an id selects, or −1 when it is outside [0, vocab) (NaN included).
template <class T>
int embedding_row(T id, int vocab) {
  return id >= T(0) && id < static_cast<T>(vocab) ? static_cast<int>(id) : -1;
}

}  // namespace

template <class T>
void CpuOps<T>::embedding_forward(const T* ids, const T* table, T* out, int rows, int vocab, int dim) {
  require(rows >= 0 && vocab >= 0 && dim > 0, "embedding: bad shape");
  for (int r = 0; r < rows; ++r) {
    T* dst = out + static_cast<size_t>(r) * dim;
    const int v = embedding_row(ids[r], vocab);
    if (v < 0) {
      std::fill(dst, dst + dim, T(0));
    } else {
      std::copy(table + static_cast<size_t>(v) * dim, table + static_cast<size_t>(v + 1) * dim, dst);
    }
  }
}

template <class T>
void CpuOps<T>::embedding_backward(const T* ids, const T* dout, T* dtable, int rows, int vocab, int dim) {
  require(rows >= 0 && vocab >= 0 && dim > 0, "embedding: bad shape");
  std::fill(dtable, dtable + static_cast<size_t>(vocab) * dim, T(0));
  for (int r = 0; r < rows; ++r) {
    const int v = embedding_row(ids[r], vocab);
    if (v < 0) continue;
    const T* src = dout + static_cast<size_t>(r) * dim;
    T* dst = dtable + static_cast<size_t>(v) * dim;
    for (int j = 0; j < dim; ++j) dst[j] += src[j];
  }
}

// The class itself is instantiated in cpu_ops.cpp; here only the members defined in this file.
#define DTSIM_INSTANTIATE_NN(T)                                                                              \
  template size_t CpuOps<T>::conv2d_scratch_size(const ConvShape&);                                          \
  template void CpuOps<T>::conv2d_forward(const ConvShape&, const T*, const T*, const T*, T*, T*);            \
  template void CpuOps<T>::conv2d_backward(const ConvShape&, const T*, const T*, const T*, T*, T*, T*, T*);   \
  template void CpuOps<T>::max_pool_forward(const PoolShape&, const T*, T*);                                 \
  template void CpuOps<T>::max_pool_backward(const PoolShape&, const T*, const T*, const T*, T*);            \
  template void CpuOps<T>::avg_pool_forward(const PoolShape&, const T*, T*);                                 \
  template void CpuOps<T>::avg_pool_backward(const PoolShape&, const T*, T*);                                \
  template void CpuOps<T>::layer_norm_forward(const T*, const T*, const T*, T*, int, int, T);                \
  template void CpuOps<T>::layer_norm_backward(const T*, const T*, const T*, T*, T*, T*, int, int, T);       \
  template void CpuOps<T>::embedding_forward(const T*, const T*, T*, int, int, int);                         \
  template void CpuOps<T>::embedding_backward(const T*, const T*, T*, int, int, int);
DTSIM_INSTANTIATE_NN(float)
DTSIM_INSTANTIATE_NN(double)

}  // namespace dtsim::gpu
