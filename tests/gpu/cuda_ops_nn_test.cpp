// CudaOps convolution, pooling, layer norm and embedding on a real GPU, against the naive contract implementations
// of nn_reference.hpp and, once cpu_ops_nn.cpp implements them, against CpuOps<float>. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/gpu/cuda_test_fixture.hpp"
#include "tests/gpu/nn_reference.hpp"

namespace dtsim::gpu {
namespace {

using testing_support::bit_identical;
using testing_support::close_to;
using testing_support::coarse_floats;
using testing_support::cpu_reference_ran;
using testing_support::random_floats;

ConvShape conv(int batch, int c, int h, int w, int oc, int kh, int kw, int stride, int pad) {
  ConvShape s;
  s.batch = batch, s.in_channels = c, s.height = h, s.width = w, s.out_channels = oc;
  s.kernel_h = kh, s.kernel_w = kw, s.stride = stride, s.pad = pad;
  return s;
}

PoolShape pool(int batch, int channels, int h, int w, int kernel, int stride) {
  PoolShape s;
  s.batch = batch, s.channels = channels, s.height = h, s.width = w, s.kernel = kernel, s.stride = stride;
  return s;
}

struct ConvCase {
  ConvShape shape;
  size_t scratch_limit;  // elements; small limits split the batch into chunks
};

class CudaConvTest : public CudaOpsTest, public ::testing::WithParamInterface<ConvCase> {};

TEST_P(CudaConvTest, ForwardAndBackwardMatchReference) {
  const ConvShape s = GetParam().shape;
  cuda().set_conv_scratch_limit(GetParam().scratch_limit);
  const size_t in = static_cast<size_t>(s.batch) * s.in_channels * s.height * s.width;
  const size_t out = static_cast<size_t>(s.batch) * s.out_channels * s.out_h() * s.out_w();
  const auto x = random_floats(in, 1), w = random_floats(static_cast<size_t>(s.out_channels) * s.patch_size(), 2);
  const auto bias = random_floats(s.out_channels, 3), dy = random_floats(out, 4);
  const size_t scratch_size = cuda().conv2d_scratch_size(s);
  ASSERT_GE(scratch_size, static_cast<size_t>(s.patch_size()) * s.out_h() * s.out_w());
  Buffer<float> dx_in = on_device(x), dw_in = on_device(w), dbias_in = on_device(bias), ddy = on_device(dy);
  Buffer<float> scratch(cuda(), scratch_size), y(cuda(), out), dx(cuda(), in), dw(cuda(), w.size()),
      dbias(cuda(), bias.size());

  cuda().conv2d_forward(s, dx_in.data(), dw_in.data(), dbias_in.data(), y.data(), scratch.data());
  EXPECT_TRUE(close_to(on_host(y), nn_reference::conv2d_forward(s, x, w, bias.data()), kBackendTolerance));
  cuda().conv2d_forward(s, dx_in.data(), dw_in.data(), nullptr, y.data(), scratch.data());
  EXPECT_TRUE(close_to(on_host(y), nn_reference::conv2d_forward(s, x, w, nullptr), kBackendTolerance));

  cuda().conv2d_backward(s, dx_in.data(), dw_in.data(), ddy.data(), dx.data(), dw.data(), dbias.data(), scratch.data());
  const nn_reference::ConvGrads expected = nn_reference::conv2d_backward(s, x, w, dy);
  const auto got_dx = on_host(dx), got_dw = on_host(dw), got_dbias = on_host(dbias);
  EXPECT_TRUE(close_to(got_dx, expected.dx, kBackendTolerance));
  EXPECT_TRUE(close_to(got_dw, expected.dw, kBackendTolerance));
  EXPECT_TRUE(close_to(got_dbias, expected.dbias, kBackendTolerance));

  // Deterministic, and the optional outputs are optional.
  cuda().conv2d_backward(s, dx_in.data(), dw_in.data(), ddy.data(), dx.data(), dw.data(), dbias.data(), scratch.data());
  EXPECT_TRUE(bit_identical(on_host(dx), got_dx));
  EXPECT_TRUE(bit_identical(on_host(dw), got_dw));
  EXPECT_TRUE(bit_identical(on_host(dbias), got_dbias));
  cuda().fill(dw.data(), w.size(), std::nanf(""));
  cuda().conv2d_backward(s, dx_in.data(), dw_in.data(), ddy.data(), nullptr, dw.data(), nullptr, scratch.data());
  EXPECT_TRUE(bit_identical(on_host(dw), got_dw));

  std::vector<float> y_cpu(out), dx_cpu(in), dw_cpu(w.size()), dbias_cpu(bias.size());
  if (cpu_reference_ran("conv2d", [&] {
        std::vector<float> cpu_scratch(cpu.conv2d_scratch_size(s));
        cpu.conv2d_forward(s, x.data(), w.data(), bias.data(), y_cpu.data(), cpu_scratch.data());
        cpu.conv2d_backward(s, x.data(), w.data(), dy.data(), dx_cpu.data(), dw_cpu.data(), dbias_cpu.data(),
                            cpu_scratch.data());
      })) {
    cuda().conv2d_forward(s, dx_in.data(), dw_in.data(), dbias_in.data(), y.data(), scratch.data());
    EXPECT_TRUE(close_to(on_host(y), y_cpu, kBackendTolerance));
    EXPECT_TRUE(close_to(got_dx, dx_cpu, kBackendTolerance));
    EXPECT_TRUE(close_to(got_dw, dw_cpu, kBackendTolerance));
    EXPECT_TRUE(close_to(got_dbias, dbias_cpu, kBackendTolerance));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudaConvTest,
    ::testing::Values(ConvCase{conv(8, 3, 32, 32, 16, 3, 3, 1, 1), CudaOps::kDefaultConvScratchLimit},
                      ConvCase{conv(8, 3, 32, 32, 16, 3, 3, 1, 1), 3 * 27 * 1024},  // chunks of 3, 3 and 2
                      ConvCase{conv(5, 4, 13, 11, 6, 5, 3, 2, 2), 1},               // one sample at a time
                      ConvCase{conv(3, 2, 9, 10, 5, 2, 2, 3, 0), CudaOps::kDefaultConvScratchLimit},  // gaps
                      ConvCase{conv(16, 32, 14, 14, 64, 1, 1, 1, 0), CudaOps::kDefaultConvScratchLimit}));

TEST_F(CudaOpsTest, ConvRejectsImpossibleShapes) {
  EXPECT_THROW(cuda().conv2d_scratch_size(conv(1, 1, 2, 2, 1, 5, 5, 1, 0)), std::invalid_argument);
  EXPECT_THROW(cuda().conv2d_scratch_size(conv(1, 1, 8, 8, 1, 3, 3, 0, 0)), std::invalid_argument);
}

class CudaPoolTest : public CudaOpsTest, public ::testing::WithParamInterface<PoolShape> {};

TEST_P(CudaPoolTest, MaxRoutingIsExactAndAverageMatches) {
  const PoolShape s = GetParam();
  const size_t in = static_cast<size_t>(s.batch) * s.channels * s.height * s.width;
  const size_t out = static_cast<size_t>(s.batch) * s.channels * s.out_h() * s.out_w();
  const auto x = coarse_floats(in, 5, 3);  // ties: the first maximum in row-major order must receive dy
  const auto dy = random_floats(out, 6);
  Buffer<float> dxin = on_device(x), ddy = on_device(dy), y(cuda(), out), dx(cuda(), in);

  cuda().max_pool_forward(s, dxin.data(), y.data());
  const auto y_host = on_host(y);
  EXPECT_TRUE(bit_identical(y_host, nn_reference::max_pool_forward(s, x)));
  cuda().max_pool_backward(s, dxin.data(), y.data(), ddy.data(), dx.data());
  const auto dx_host = on_host(dx);
  EXPECT_TRUE(bit_identical(dx_host, nn_reference::max_pool_backward(s, x, y_host, dy)));
  std::vector<float> y_cpu(out), dx_cpu(in);
  if (cpu_reference_ran("max_pool", [&] {
        cpu.max_pool_forward(s, x.data(), y_cpu.data());
        cpu.max_pool_backward(s, x.data(), y_cpu.data(), dy.data(), dx_cpu.data());
      })) {
    EXPECT_TRUE(bit_identical(y_host, y_cpu));
    EXPECT_TRUE(close_to(dx_host, dx_cpu, kBackendTolerance));
  }

  const auto xr = random_floats(in, 7);
  Buffer<float> dxr = on_device(xr);
  cuda().avg_pool_forward(s, dxr.data(), y.data());
  EXPECT_TRUE(close_to(on_host(y), nn_reference::avg_pool_forward(s, xr), kBackendTolerance));
  cuda().avg_pool_backward(s, ddy.data(), dx.data());
  EXPECT_TRUE(close_to(on_host(dx), nn_reference::avg_pool_backward(s, dy), kBackendTolerance));
  if (cpu_reference_ran("avg_pool", [&] {
        cpu.avg_pool_forward(s, xr.data(), y_cpu.data());
        cpu.avg_pool_backward(s, dy.data(), dx_cpu.data());
      })) {
    EXPECT_TRUE(close_to(on_host(y), y_cpu, kBackendTolerance));
    EXPECT_TRUE(close_to(on_host(dx), dx_cpu, kBackendTolerance));
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaPoolTest,
                         ::testing::Values(pool(16, 8, 28, 28, 2, 2), pool(4, 3, 15, 17, 3, 1), pool(4, 3, 15, 13, 3, 2),
                                           pool(2, 2, 10, 11, 2, 3)));

class CudaLayerNormTest : public CudaOpsTest, public ::testing::WithParamInterface<int> {};

TEST_P(CudaLayerNormTest, MatchesReference) {
  const int rows = 64, cols = GetParam();
  const float eps = 1e-5f;
  const size_t n = static_cast<size_t>(rows) * cols;
  auto x = random_floats(n, 8, -2.0f, 2.0f);
  for (float& v : x) v += 3.0f;
  const auto gamma = random_floats(cols, 9, 0.5f, 1.5f), beta = random_floats(cols, 10), dy = random_floats(n, 11);
  Buffer<float> dx_in = on_device(x), dgamma_in = on_device(gamma), dbeta_in = on_device(beta), ddy = on_device(dy);
  Buffer<float> y(cuda(), n), dx(cuda(), n), dgamma(cuda(), cols), dbeta(cuda(), cols);

  cuda().layer_norm_forward(dx_in.data(), dgamma_in.data(), dbeta_in.data(), y.data(), rows, cols, eps);
  const auto y_host = on_host(y);
  EXPECT_TRUE(close_to(y_host, nn_reference::layer_norm_forward(x, gamma, beta, rows, cols, eps), kBackendTolerance));
  cuda().layer_norm_backward(dx_in.data(), dgamma_in.data(), ddy.data(), dx.data(), dgamma.data(), dbeta.data(), rows,
                             cols, eps);
  const nn_reference::LayerNormGrads expected = nn_reference::layer_norm_backward(x, gamma, dy, rows, cols, eps);
  const auto dx_host = on_host(dx), dgamma_host = on_host(dgamma), dbeta_host = on_host(dbeta);
  EXPECT_TRUE(close_to(dx_host, expected.dx, kBackendTolerance));
  EXPECT_TRUE(close_to(dgamma_host, expected.dgamma, kBackendTolerance));
  EXPECT_TRUE(close_to(dbeta_host, expected.dbeta, kBackendTolerance));

  // Deterministic, and dx may overwrite dy.
  cuda().layer_norm_backward(dx_in.data(), dgamma_in.data(), ddy.data(), ddy.data(), dgamma.data(), dbeta.data(), rows,
                             cols, eps);
  EXPECT_TRUE(bit_identical(on_host(ddy), dx_host));
  EXPECT_TRUE(bit_identical(on_host(dgamma), dgamma_host));
  EXPECT_TRUE(bit_identical(on_host(dbeta), dbeta_host));

  std::vector<float> y_cpu(n), dx_cpu(n), dgamma_cpu(cols), dbeta_cpu(cols);
  if (cpu_reference_ran("layer_norm", [&] {
        cpu.layer_norm_forward(x.data(), gamma.data(), beta.data(), y_cpu.data(), rows, cols, eps);
        cpu.layer_norm_backward(x.data(), gamma.data(), dy.data(), dx_cpu.data(), dgamma_cpu.data(), dbeta_cpu.data(),
                                rows, cols, eps);
      })) {
    EXPECT_TRUE(close_to(y_host, y_cpu, kBackendTolerance));
    EXPECT_TRUE(close_to(dx_host, dx_cpu, kBackendTolerance));
    EXPECT_TRUE(close_to(dgamma_host, dgamma_cpu, kBackendTolerance));
    EXPECT_TRUE(close_to(dbeta_host, dbeta_cpu, kBackendTolerance));
  }
}

INSTANTIATE_TEST_SUITE_P(Columns, CudaLayerNormTest, ::testing::Values(1, 10, 128, 768, 1000));

TEST_F(CudaOpsTest, EmbeddingIsExactAndDeterministic) {
  const int vocab = 1000, dim = 64, rows = 4096;
  std::vector<float> ids(rows);
  for (int r = 0; r < rows; ++r) ids[r] = static_cast<float>((r * 37) % 1200 - 100);  // repeats and out-of-range ids
  const auto table = random_floats(static_cast<size_t>(vocab) * dim, 12);
  const auto dout = random_floats(static_cast<size_t>(rows) * dim, 13);
  Buffer<float> dids = on_device(ids), dtable_in = on_device(table), ddout = on_device(dout);
  Buffer<float> out(cuda(), dout.size()), dtable(cuda(), table.size());

  cuda().embedding_forward(dids.data(), dtable_in.data(), out.data(), rows, vocab, dim);
  const auto out_host = on_host(out);
  EXPECT_TRUE(bit_identical(out_host, nn_reference::embedding_forward(ids, table, dim, vocab)));
  cuda().embedding_backward(dids.data(), ddout.data(), dtable.data(), rows, vocab, dim);
  const auto dtable_host = on_host(dtable);
  EXPECT_TRUE(bit_identical(dtable_host, nn_reference::embedding_backward(ids, dout, dim, vocab)));
  cuda().embedding_backward(dids.data(), ddout.data(), dtable.data(), rows, vocab, dim);
  EXPECT_TRUE(bit_identical(on_host(dtable), dtable_host));

  std::vector<float> out_cpu(out_host.size()), dtable_cpu(dtable_host.size());
  if (cpu_reference_ran("embedding", [&] {
        cpu.embedding_forward(ids.data(), table.data(), out_cpu.data(), rows, vocab, dim);
        cpu.embedding_backward(ids.data(), dout.data(), dtable_cpu.data(), rows, vocab, dim);
      })) {
    EXPECT_TRUE(bit_identical(out_host, out_cpu));
    EXPECT_TRUE(close_to(dtable_host, dtable_cpu, kBackendTolerance));
  }
}

}  // namespace
}  // namespace dtsim::gpu
