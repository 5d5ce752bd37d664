// Convolution, pooling, layer norm and embedding of the CPU reference backend against direct loops, closed
// forms and central finite differences in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <ostream>
#include <random>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "tests/gpu/finite_differences.hpp"

namespace dtsim::gpu {

// Readable parameter names in gtest's output (found by argument-dependent lookup, hence outside the
// anonymous namespace).
static void PrintTo(const ConvShape& s, std::ostream* os) {
  *os << s.batch << "x" << s.in_channels << "x" << s.height << "x" << s.width << " -> " << s.out_channels << " k"
      << s.kernel_h << "x" << s.kernel_w << " s" << s.stride << " p" << s.pad;
}

static void PrintTo(const PoolShape& s, std::ostream* os) {
  *os << s.batch << "x" << s.channels << "x" << s.height << "x" << s.width << " k" << s.kernel << " s" << s.stride;
}

namespace {

using finite_differences::numeric_gradient;
using finite_differences::random_vector;
using finite_differences::relative_error;
using finite_differences::weighted_sum;

// ---- convolution ------------------------------------------------------------------------------------------

size_t input_count(const ConvShape& s) { return static_cast<size_t>(s.batch) * s.in_channels * s.height * s.width; }
size_t weight_count(const ConvShape& s) { return static_cast<size_t>(s.out_channels) * s.patch_size(); }
size_t output_count(const ConvShape& s) {
  return static_cast<size_t>(s.batch) * s.out_channels * s.out_h() * s.out_w();
}

// The definition, one loop per index: y[n,co,oy,ox] = b[co] + Σ_{c,i,j} w[co,c,i,j] · x[n,c,oy·s−p+i,ox·s−p+j].
std::vector<double> direct_conv(const ConvShape& s, const std::vector<double>& x, const std::vector<double>& w,
                                const std::vector<double>& b) {
  const int oh = s.out_h(), ow = s.out_w();
  std::vector<double> y(output_count(s));
  for (int n = 0; n < s.batch; ++n)
    for (int co = 0; co < s.out_channels; ++co)
      for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < ow; ++ox) {
          double acc = b[co];
          for (int c = 0; c < s.in_channels; ++c)
            for (int i = 0; i < s.kernel_h; ++i)
              for (int j = 0; j < s.kernel_w; ++j) {
                const int iy = oy * s.stride - s.pad + i, ix = ox * s.stride - s.pad + j;
                if (iy < 0 || iy >= s.height || ix < 0 || ix >= s.width) continue;
                acc += w[((co * s.in_channels + c) * s.kernel_h + i) * s.kernel_w + j] *
                       x[((n * s.in_channels + c) * s.height + iy) * s.width + ix];
              }
          y[((n * s.out_channels + co) * oh + oy) * ow + ox] = acc;
        }
  return y;
}

ConvShape conv_shape(int batch, int in_channels, int height, int width, int out_channels, int kh, int kw, int stride,
                     int pad) {
  ConvShape s;
  s.batch = batch;
  s.in_channels = in_channels;
  s.height = height;
  s.width = width;
  s.out_channels = out_channels;
  s.kernel_h = kh;
  s.kernel_w = kw;
  s.stride = stride;
  s.pad = pad;
  return s;
}

class ConvTest : public ::testing::TestWithParam<ConvShape> {};

TEST_P(ConvTest, ForwardMatchesDirectLoops) {
  const ConvShape s = GetParam();
  const auto x = random_vector(input_count(s), 1), w = random_vector(weight_count(s), 2),
             b = random_vector(s.out_channels, 3);
  CpuOps<double> ops;
  std::vector<double> scratch(ops.conv2d_scratch_size(s), std::nan("")), y(output_count(s), std::nan(""));
  ops.conv2d_forward(s, x.data(), w.data(), b.data(), y.data(), scratch.data());
  const auto expected = direct_conv(s, x, w, b);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], expected[i], 1e-12) << i;

  // A null bias means no bias.
  ops.conv2d_forward(s, x.data(), w.data(), nullptr, y.data(), scratch.data());
  const auto unbiased = direct_conv(s, x, w, std::vector<double>(s.out_channels, 0.0));
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], unbiased[i], 1e-12) << i;
}

TEST_P(ConvTest, FloatForwardAgreesWithDouble) {
  const ConvShape s = GetParam();
  const auto x = random_vector(input_count(s), 4), w = random_vector(weight_count(s), 5),
             b = random_vector(s.out_channels, 6);
  CpuOps<float> ops;
  const std::vector<float> xf(x.begin(), x.end()), wf(w.begin(), w.end()), bf(b.begin(), b.end());
  std::vector<float> scratch(ops.conv2d_scratch_size(s)), y(output_count(s));
  ops.conv2d_forward(s, xf.data(), wf.data(), bf.data(), y.data(), scratch.data());
  const auto expected = direct_conv(s, x, w, b);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], expected[i], 1e-5) << i;
}

// Backward against finite differences of L = Σ y ⊙ r for fixed random r (so dL/dy = r), on shapes small
// enough to perturb every coordinate.
class ConvFiniteDifferenceTest : public ConvTest {};

TEST_P(ConvFiniteDifferenceTest, BackwardMatchesFiniteDifferences) {
  const ConvShape s = GetParam();
  auto x = random_vector(input_count(s), 7), w = random_vector(weight_count(s), 8),
       b = random_vector(s.out_channels, 9);
  const auto r = random_vector(output_count(s), 10);
  CpuOps<double> ops;
  std::vector<double> scratch(ops.conv2d_scratch_size(s)), y(output_count(s));
  const auto objective = [&] {
    ops.conv2d_forward(s, x.data(), w.data(), b.data(), y.data(), scratch.data());
    return weighted_sum(y, r);
  };
  std::vector<double> dx(x.size(), std::nan("")), dw(w.size(), std::nan("")), db(b.size(), std::nan(""));
  ops.conv2d_backward(s, x.data(), w.data(), r.data(), dx.data(), dw.data(), db.data(), scratch.data());
  EXPECT_LT(relative_error(dx, numeric_gradient(x, objective)), 1e-8);
  EXPECT_LT(relative_error(dw, numeric_gradient(w, objective)), 1e-8);
  EXPECT_LT(relative_error(db, numeric_gradient(b, objective)), 1e-8);

  // Without dx and dbias, dw is unchanged.
  std::vector<double> dw_only(w.size(), std::nan(""));
  ops.conv2d_backward(s, x.data(), w.data(), r.data(), nullptr, dw_only.data(), nullptr, scratch.data());
  for (size_t i = 0; i < dw.size(); ++i) EXPECT_EQ(dw_only[i], dw[i]);
}

// The closed forms of the gradients of a convolution, one loop per index, for shapes too large for finite
// differences (several im2col chunks).
TEST_P(ConvTest, BackwardMatchesDirectLoops) {
  const ConvShape s = GetParam();
  const auto x = random_vector(input_count(s), 11), w = random_vector(weight_count(s), 12),
             dy = random_vector(output_count(s), 13);
  CpuOps<double> ops;
  std::vector<double> scratch(ops.conv2d_scratch_size(s)), dx(x.size()), dw(w.size()), db(s.out_channels);
  ops.conv2d_backward(s, x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data(), scratch.data());
  std::vector<double> ex(x.size(), 0.0), ew(w.size(), 0.0), eb(s.out_channels, 0.0);
  const int oh = s.out_h(), ow = s.out_w();
  for (int n = 0; n < s.batch; ++n)
    for (int co = 0; co < s.out_channels; ++co)
      for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < ow; ++ox) {
          const double g = dy[((n * s.out_channels + co) * oh + oy) * ow + ox];
          eb[co] += g;
          for (int c = 0; c < s.in_channels; ++c)
            for (int i = 0; i < s.kernel_h; ++i)
              for (int j = 0; j < s.kernel_w; ++j) {
                const int iy = oy * s.stride - s.pad + i, ix = ox * s.stride - s.pad + j;
                if (iy < 0 || iy >= s.height || ix < 0 || ix >= s.width) continue;
                const size_t wi = ((co * s.in_channels + c) * s.kernel_h + i) * s.kernel_w + j;
                const size_t xi = ((n * s.in_channels + c) * s.height + iy) * s.width + ix;
                ew[wi] += g * x[xi];
                ex[xi] += g * w[wi];
              }
        }
  EXPECT_LT(relative_error(dx, ex), 1e-13);
  EXPECT_LT(relative_error(dw, ew), 1e-13);
  EXPECT_LT(relative_error(db, eb), 1e-13);
}

const ConvShape kSmallConvShapes[] = {
    conv_shape(3, 2, 7, 6, 4, 3, 2, 2, 1),  // non-square kernel, stride 2, pad 1
    conv_shape(2, 3, 5, 5, 2, 5, 5, 1, 2),  // "same" 5×5 with pad 2
    conv_shape(2, 2, 6, 8, 3, 2, 3, 3, 0),  // stride 3 leaves the last columns unread
    conv_shape(2, 4, 4, 4, 5, 1, 1, 1, 0),  // 1×1
    conv_shape(2, 1, 4, 3, 2, 4, 4, 1, 3),  // padding wider than the overlap
};
INSTANTIATE_TEST_SUITE_P(Small, ConvTest, ::testing::ValuesIn(kSmallConvShapes));
INSTANTIATE_TEST_SUITE_P(Small, ConvFiniteDifferenceTest, ::testing::ValuesIn(kSmallConvShapes));
// 72-long patches at 32×32 positions: the batch of 40 spans two im2col chunks.
INSTANTIATE_TEST_SUITE_P(SeveralChunks, ConvTest, ::testing::Values(conv_shape(40, 8, 32, 32, 4, 3, 3, 1, 1)));

TEST(CpuOpsConv, ScratchCoversAtLeastOneSampleIm2col) {
  CpuOps<float> ops;
  const ConvShape s = conv_shape(64, 32, 14, 14, 64, 5, 5, 1, 2);
  EXPECT_GE(ops.conv2d_scratch_size(s), static_cast<size_t>(s.patch_size()) * s.out_h() * s.out_w());
}

TEST(CpuOpsConv, RejectsImpossibleShapes) {
  CpuOps<float> ops;
  EXPECT_THROW(ops.conv2d_scratch_size(conv_shape(1, 1, 3, 3, 1, 5, 5, 1, 0)), std::invalid_argument);
  EXPECT_THROW(ops.conv2d_scratch_size(conv_shape(1, 1, 3, 3, 1, 3, 3, 0, 0)), std::invalid_argument);
}

// ---- pooling ----------------------------------------------------------------------------------------------

PoolShape pool_shape(int batch, int channels, int height, int width, int kernel, int stride) {
  PoolShape s;
  s.batch = batch;
  s.channels = channels;
  s.height = height;
  s.width = width;
  s.kernel = kernel;
  s.stride = stride;
  return s;
}

size_t pool_input_count(const PoolShape& s) { return static_cast<size_t>(s.batch) * s.channels * s.height * s.width; }
size_t pool_output_count(const PoolShape& s) {
  return static_cast<size_t>(s.batch) * s.channels * s.out_h() * s.out_w();
}

// A permutation of well-separated values, so that ±h in a finite difference never changes a window's arg-max.
std::vector<double> distinct_values(size_t n, unsigned seed) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.01 * static_cast<double>(i) - 0.3;
  std::mt19937 gen(seed);
  std::shuffle(v.begin(), v.end(), gen);
  return v;
}

class PoolTest : public ::testing::TestWithParam<PoolShape> {};

TEST_P(PoolTest, ForwardMatchesDirectLoops) {
  const PoolShape s = GetParam();
  const auto x = random_vector(pool_input_count(s), 20);
  CpuOps<double> ops;
  std::vector<double> ymax(pool_output_count(s)), yavg(pool_output_count(s));
  ops.max_pool_forward(s, x.data(), ymax.data());
  ops.avg_pool_forward(s, x.data(), yavg.data());
  const int oh = s.out_h(), ow = s.out_w();
  for (int q = 0; q < s.batch * s.channels; ++q)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        double best = -INFINITY, sum = 0;
        for (int i = 0; i < s.kernel; ++i)
          for (int j = 0; j < s.kernel; ++j) {
            const double v = x[(q * s.height + oy * s.stride + i) * s.width + ox * s.stride + j];
            best = std::max(best, v);
            sum += v;
          }
        const size_t o = (static_cast<size_t>(q) * oh + oy) * ow + ox;
        EXPECT_EQ(ymax[o], best);
        EXPECT_NEAR(yavg[o], sum / (s.kernel * s.kernel), 1e-15);
      }
}

TEST_P(PoolTest, BackwardMatchesFiniteDifferences) {
  const PoolShape s = GetParam();
  auto x = distinct_values(pool_input_count(s), 21);
  const auto r = random_vector(pool_output_count(s), 22);
  CpuOps<double> ops;
  std::vector<double> y(pool_output_count(s)), dx(x.size(), std::nan(""));

  const auto max_objective = [&] {
    ops.max_pool_forward(s, x.data(), y.data());
    return weighted_sum(y, r);
  };
  max_objective();
  ops.max_pool_backward(s, x.data(), y.data(), r.data(), dx.data());
  EXPECT_LT(relative_error(dx, numeric_gradient(x, max_objective)), 1e-8);

  const auto avg_objective = [&] {
    ops.avg_pool_forward(s, x.data(), y.data());
    return weighted_sum(y, r);
  };
  std::fill(dx.begin(), dx.end(), std::nan(""));
  ops.avg_pool_backward(s, r.data(), dx.data());
  EXPECT_LT(relative_error(dx, numeric_gradient(x, avg_objective)), 1e-8);
}

INSTANTIATE_TEST_SUITE_P(Shapes, PoolTest,
                         ::testing::Values(pool_shape(2, 3, 6, 4, 2, 2),    // tiles exactly
                                           pool_shape(2, 2, 7, 5, 2, 2),    // last row and column unused
                                           pool_shape(1, 2, 7, 7, 3, 2),    // overlapping windows accumulate
                                           pool_shape(3, 1, 5, 6, 3, 1)));  // stride 1, heavy overlap

TEST(CpuOpsPool, MaxPoolTieGoesToTheFirstMaximumInRowMajorOrder) {
  CpuOps<double> ops;
  // One 2×4 plane, two 2×2 windows. Left window: all four equal. Right window: 5 at (0,3) and at (1,2).
  const std::vector<double> x{1, 1, 2, 5,
                              1, 1, 5, 0};
  const PoolShape s = pool_shape(1, 1, 2, 4, 2, 2);
  std::vector<double> y(2), dx(8, std::nan(""));
  const std::vector<double> dy{10, 20};
  ops.max_pool_forward(s, x.data(), y.data());
  EXPECT_EQ(y, (std::vector<double>{1, 5}));
  ops.max_pool_backward(s, x.data(), y.data(), dy.data(), dx.data());
  EXPECT_EQ(dx, (std::vector<double>{10, 0, 0, 20,
                                     0, 0, 0, 0}));
}

TEST(CpuOpsPool, OverlappingMaxWindowsAccumulateAtASharedMaximum) {
  CpuOps<double> ops;
  // 1×3 windows of width 2, stride 1 over a row whose middle value is the maximum of both windows.
  const std::vector<double> x{0, 9, 1, 0, 0, 0};  // 2 × 3
  const PoolShape s = pool_shape(1, 1, 2, 3, 2, 1);
  std::vector<double> y(2), dx(6);
  const std::vector<double> dy{1.5, 2.5};
  ops.max_pool_forward(s, x.data(), y.data());
  ops.max_pool_backward(s, x.data(), y.data(), dy.data(), dx.data());
  EXPECT_EQ(dx, (std::vector<double>{0, 4, 0, 0, 0, 0}));
}

TEST(CpuOpsPool, MaxPoolPropagatesNaN) {
  CpuOps<float> ops;
  const std::vector<float> x{1, std::nanf(""), 3, 2};
  float y = 0;
  ops.max_pool_forward(pool_shape(1, 1, 2, 2, 2, 2), x.data(), &y);
  EXPECT_TRUE(std::isnan(y));
}

// ---- layer norm -------------------------------------------------------------------------------------------

TEST(CpuOpsLayerNorm, ForwardMatchesClosedForm) {
  CpuOps<double> ops;
  const int rows = 3, cols = 5;
  const double eps = 1e-5;
  const auto x = random_vector(rows * cols, 30, -2, 3), gamma = random_vector(cols, 31), beta = random_vector(cols, 32);
  std::vector<double> y(rows * cols);
  ops.layer_norm_forward(x.data(), gamma.data(), beta.data(), y.data(), rows, cols, eps);
  for (int r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int j = 0; j < cols; ++j) mean += x[r * cols + j] / cols;
    for (int j = 0; j < cols; ++j) var += (x[r * cols + j] - mean) * (x[r * cols + j] - mean) / cols;
    for (int j = 0; j < cols; ++j)
      EXPECT_NEAR(y[r * cols + j], (x[r * cols + j] - mean) / std::sqrt(var + eps) * gamma[j] + beta[j], 1e-14);
  }
  // With gamma = 1 and beta = 0 every row has mean 0 and (almost, because of eps) unit variance.
  const std::vector<double> ones(cols, 1.0), zeros(cols, 0.0);
  ops.layer_norm_forward(x.data(), ones.data(), zeros.data(), y.data(), rows, cols, 0.0);
  for (int r = 0; r < rows; ++r) {
    double mean = 0, sq = 0;
    for (int j = 0; j < cols; ++j) mean += y[r * cols + j] / cols;
    for (int j = 0; j < cols; ++j) sq += y[r * cols + j] * y[r * cols + j] / cols;
    EXPECT_NEAR(mean, 0.0, 1e-15);
    EXPECT_NEAR(sq, 1.0, 1e-14);
  }
}

TEST(CpuOpsLayerNorm, BackwardMatchesFiniteDifferences) {
  CpuOps<double> ops;
  const int rows = 4, cols = 6;
  const double eps = 1e-3;
  auto x = random_vector(rows * cols, 33), gamma = random_vector(cols, 34, 0.5, 1.5), beta = random_vector(cols, 35);
  const auto r = random_vector(rows * cols, 36);
  std::vector<double> y(rows * cols);
  const auto objective = [&] {
    ops.layer_norm_forward(x.data(), gamma.data(), beta.data(), y.data(), rows, cols, eps);
    return weighted_sum(y, r);
  };
  std::vector<double> dx(x.size(), std::nan("")), dgamma(cols, std::nan("")), dbeta(cols, std::nan(""));
  ops.layer_norm_backward(x.data(), gamma.data(), r.data(), dx.data(), dgamma.data(), dbeta.data(), rows, cols, eps);
  EXPECT_LT(relative_error(dx, numeric_gradient(x, objective)), 1e-7);
  EXPECT_LT(relative_error(dgamma, numeric_gradient(gamma, objective)), 1e-8);
  EXPECT_LT(relative_error(dbeta, numeric_gradient(beta, objective)), 1e-8);
}

// ---- embedding --------------------------------------------------------------------------------------------

TEST(CpuOpsEmbedding, ForwardGathersRowsAndZeroesOutOfRangeIds) {
  CpuOps<float> ops;
  const int vocab = 3, dim = 2;
  const std::vector<float> table{1, 2, 3, 4, 5, 6};
  const std::vector<float> ids{2, -1, 0, 3, 1, std::nanf("")};
  std::vector<float> out(ids.size() * dim, 99.0f);
  ops.embedding_forward(ids.data(), table.data(), out.data(), static_cast<int>(ids.size()), vocab, dim);
  EXPECT_EQ(out, (std::vector<float>{5, 6, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0}));
}

TEST(CpuOpsEmbedding, BackwardAccumulatesRepeatedIdsAndIgnoresOutOfRange) {
  CpuOps<double> ops;
  const int vocab = 4, dim = 2;
  const std::vector<double> ids{1, 3, 1, 7, 1, -2};
  const std::vector<double> dout{1, 2, 10, 20, 100, 200, 5, 5, 1000, 2000, 7, 7};
  std::vector<double> dtable(vocab * dim, std::nan(""));
  ops.embedding_backward(ids.data(), dout.data(), dtable.data(), static_cast<int>(ids.size()), vocab, dim);
  EXPECT_EQ(dtable, (std::vector<double>{0, 0, 1101, 2202, 0, 0, 10, 20}));
}

TEST(CpuOpsEmbedding, BackwardIsTheGradientOfTheForward) {
  CpuOps<double> ops;
  const int vocab = 5, dim = 3, rows = 7;
  auto table = random_vector(vocab * dim, 40);
  const std::vector<double> ids{4, 0, 4, 2, 9, 4, 0};
  const auto r = random_vector(rows * dim, 41);
  std::vector<double> out(rows * dim), dtable(vocab * dim);
  const auto objective = [&] {
    ops.embedding_forward(ids.data(), table.data(), out.data(), rows, vocab, dim);
    return weighted_sum(out, r);
  };
  ops.embedding_backward(ids.data(), r.data(), dtable.data(), rows, vocab, dim);
  EXPECT_LT(relative_error(dtable, numeric_gradient(table, objective)), 1e-9);
}

}  // namespace
}  // namespace dtsim::gpu
