// CudaOps against CpuOps<float> on a real GPU: memory, GEMM, dense algebra, reductions, activations, loss,
// number formats and optimizer updates; determinism and error handling. Every test is skipped, with the reason,
// where no usable CUDA device exists. Convolution, pooling, layer norm and embedding: cuda_ops_nn_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/gpu/cuda_test_fixture.hpp"

namespace dtsim::gpu {
namespace {

using testing_support::bit_identical;
using testing_support::close_to;
using testing_support::coarse_floats;
using testing_support::random_floats;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The one CUDA test that runs where there is no GPU: the backend refuses to start with an exception, not an abort.
TEST(CudaOpsWithoutDevice, ConstructorThrowsNamingTheFailedCall) {
  if (probe_cuda().usable) GTEST_SKIP() << "a usable CUDA device is present";
  try {
    CudaOps ops;
    FAIL() << "CudaOps started without a usable device";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cudaSetDevice failed"), std::string::npos) << e.what();
  }
}

TEST_F(CudaOpsTest, MemoryRoundTripFillAndCopy) {
  const auto src = random_floats(1000, 1);
  Buffer<float> d = on_device(src);
  EXPECT_EQ(on_host(d), src);
  // Overlapping copies in both directions behave like memmove.
  for (const long shift : {-7L, 7L}) {
    auto expected = src;
    const size_t count = 500;
    std::memmove(expected.data() + 250 + shift, expected.data() + 250, count * sizeof(float));
    Buffer<float> e = on_device(src);
    cuda().copy(e.data() + 250 + shift, e.data() + 250, count);
    EXPECT_EQ(on_host(e), expected) << "shift " << shift;
  }
  Buffer<float> f(cuda(), src.size());
  cuda().copy(f.data(), d.data(), src.size());
  EXPECT_EQ(on_host(f), src);
  cuda().fill(f.data(), src.size(), -2.5f);
  EXPECT_EQ(on_host(f), std::vector<float>(src.size(), -2.5f));
  cuda().copy(f.data(), d.data(), 0);  // empty operations are no-ops
  cuda().upload(f.data(), src.data(), 0);
  EXPECT_NO_THROW(cuda().synchronize());
}

TEST_F(CudaOpsTest, AbsurdAllocationThrowsNamingTheSizeAndLeavesTheBackendUsable) {
  try {
    cuda().allocate(size_t{1} << 50);  // 4 PiB
    FAIL() << "allocating 4 PiB succeeded";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("allocate"), std::string::npos) << message;
    EXPECT_NE(message.find("4294967296.0 MiB"), std::string::npos) << message;
    EXPECT_NE(message.find("cudaMalloc"), std::string::npos) << message;
  }
  EXPECT_THROW(cuda().allocate(SIZE_MAX), std::runtime_error);
  Buffer<float> b = device_filled(10, 1.0f);  // no leftover error state
  EXPECT_EQ(on_host(b), std::vector<float>(10, 1.0f));
}

TEST_F(CudaOpsTest, ApiErrorsBecomeRuntimeErrorsNamingTheCall) {
  std::vector<float> host(4);
  try {
    cuda().download(host.data(), nullptr, host.size());
    FAIL() << "a download from a null pointer succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cudaMemcpy (download)"), std::string::npos) << e.what();
  }
  Buffer<float> c = device_filled(4, 0.0f);
  try {
    cuda().gemm_strided_batched(Transpose::No, Transpose::No, 2, -1, 2, 1.0f, c.data(), 0, c.data(), 0, 0.0f, c.data(),
                                0, 1);
    FAIL() << "a GEMM with a negative size succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cublasSgemm"), std::string::npos) << e.what();
  }
  EXPECT_EQ(on_host(device_filled(3, 2.0f)), std::vector<float>(3, 2.0f));
}

class CudaGemmTest : public CudaOpsTest, public ::testing::WithParamInterface<std::tuple<bool, bool>> {};

// Sizes that are not multiples of any tile, and a large inner dimension: TF32 (10-bit mantissas) would miss the
// 1e-4 agreement by an order of magnitude there.
TEST_P(CudaGemmTest, MatchesCpuForAllTransposes) {
  const auto [ta, tb] = GetParam();
  const Transpose ta_ = ta ? Transpose::Yes : Transpose::No, tb_ = tb ? Transpose::Yes : Transpose::No;
  for (const auto& [m, k, n] : {std::tuple{67, 129, 33}, std::tuple{256, 1024, 192}}) {
    const int a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
    const auto a = random_floats(static_cast<size_t>(a_rows) * a_cols, 2);
    const auto b = random_floats(static_cast<size_t>(b_rows) * b_cols, 3);
    auto expected = random_floats(static_cast<size_t>(m) * n, 4);
    Buffer<float> da = on_device(a), db = on_device(b), dc = on_device(expected);
    cpu.gemm(ta_, tb_, 0.5f, {a.data(), a_rows, a_cols}, {b.data(), b_rows, b_cols}, 2.0f, {expected.data(), m, n});
    cuda().gemm(ta_, tb_, 0.5f, {da.data(), a_rows, a_cols}, {db.data(), b_rows, b_cols}, 2.0f, {dc.data(), m, n});
    EXPECT_TRUE(close_to(on_host(dc), expected, kBackendTolerance)) << m << "×" << k << "×" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(AllTransposes, CudaGemmTest, ::testing::Combine(::testing::Bool(), ::testing::Bool()));

TEST_F(CudaOpsTest, GemmEdgeCases) {
  const std::vector<float> a{1, 2, 3, 4}, b{1, 0, 0, 1};
  Buffer<float> da = on_device(a), db = on_device(b), dc = device_filled(4, std::nanf(""));
  cuda().gemm(Transpose::No, Transpose::No, 1.0f, {da.data(), 2, 2}, {db.data(), 2, 2}, 0.0f, {dc.data(), 2, 2});
  EXPECT_EQ(on_host(dc), a);  // beta = 0 ignores the NaNs
  cuda().gemm(Transpose::No, Transpose::No, 1.0f, {da.data(), 2, 0}, {db.data(), 0, 2}, 0.5f, {dc.data(), 2, 2});
  EXPECT_EQ(on_host(dc), (std::vector<float>{0.5f, 1.0f, 1.5f, 2.0f}));  // k = 0: c = beta · c
  EXPECT_THROW(cuda().gemm(Transpose::No, Transpose::No, 1.0f, {da.data(), 2, 2}, {db.data(), 1, 4}, 0.0f,
                           {dc.data(), 2, 2}),
               std::invalid_argument);
}

TEST_F(CudaOpsTest, DenseAlgebra) {
  const int rows = 300, cols = 77;
  const size_t n = static_cast<size_t>(rows) * cols;
  const auto x = random_floats(n, 5), bias = random_floats(cols, 6);
  auto y = random_floats(n, 7);
  Buffer<float> dx = on_device(x), dy = on_device(y), dbias = on_device(bias);
  cpu.axpy(0.75f, x.data(), y.data(), n);
  cuda().axpy(0.75f, dx.data(), dy.data(), n);
  cpu.scale(-1.5f, y.data(), n);
  cuda().scale(-1.5f, dy.data(), n);
  cpu.add_row_vector({y.data(), rows, cols}, bias.data());
  cuda().add_row_vector({dy.data(), rows, cols}, dbias.data());
  EXPECT_TRUE(close_to(on_host(dy), y, kBackendTolerance));
  for (const float beta : {0.0f, 1.0f, 0.5f}) {
    std::vector<float> sums(cols, beta == 0.0f ? std::nanf("") : 3.0f);
    Buffer<float> dsums = on_device(sums);
    cpu.column_sums({y.data(), rows, cols}, beta, sums.data());
    cuda().column_sums({dy.data(), rows, cols}, beta, dsums.data());
    EXPECT_TRUE(close_to(on_host(dsums), sums, kBackendTolerance)) << "beta " << beta;
  }
}

TEST_F(CudaOpsTest, Activations) {
  const size_t n = 100000;
  const auto x = random_floats(n, 8, -6.0f, 6.0f), grad = random_floats(n, 9);
  Buffer<float> dx_in = on_device(x), dgrad = on_device(grad), dy(cuda(), n), dd(cuda(), n);
  std::vector<float> y(n), d(n);
  cpu.relu_forward(x.data(), y.data(), n);
  cuda().relu_forward(dx_in.data(), dy.data(), n);
  EXPECT_TRUE(bit_identical(on_host(dy), y));
  cpu.relu_backward(y.data(), grad.data(), d.data(), n);
  cuda().relu_backward(dy.data(), dgrad.data(), dd.data(), n);
  EXPECT_TRUE(bit_identical(on_host(dd), d));
  cpu.gelu_forward(x.data(), y.data(), n);
  cuda().gelu_forward(dx_in.data(), dy.data(), n);
  EXPECT_TRUE(close_to(on_host(dy), y, kBackendTolerance));
  cpu.gelu_backward(x.data(), grad.data(), d.data(), n);
  cuda().gelu_backward(dx_in.data(), dgrad.data(), dd.data(), n);
  EXPECT_TRUE(close_to(on_host(dd), d, kBackendTolerance));
  cpu.tanh_forward(x.data(), y.data(), n);
  cuda().tanh_forward(dx_in.data(), dy.data(), n);
  EXPECT_TRUE(close_to(on_host(dy), y, kBackendTolerance));
  cpu.tanh_backward(y.data(), grad.data(), d.data(), n);
  cuda().tanh_backward(dy.data(), dgrad.data(), dd.data(), n);
  EXPECT_TRUE(close_to(on_host(dd), d, kBackendTolerance));
}

class CudaReductionTest : public CudaOpsTest, public ::testing::WithParamInterface<size_t> {};

TEST_P(CudaReductionTest, MatchCpuAndRepeatBitForBit) {
  const size_t n = GetParam();
  const auto x = random_floats(n, 10), y = random_floats(n, 11);
  Buffer<float> dx = on_device(x), dy = on_device(y);
  EXPECT_TRUE(close_to(cuda().sum(dx.data(), n), cpu.sum(x.data(), n), 1e-9));
  EXPECT_TRUE(close_to(cuda().sum_squares(dx.data(), n), cpu.sum_squares(x.data(), n), 1e-9));
  EXPECT_TRUE(close_to(cuda().dot(dx.data(), dy.data(), n), cpu.dot(x.data(), y.data(), n), 1e-9));
  EXPECT_TRUE(same_bits(cuda().sum(dx.data(), n), cuda().sum(dx.data(), n)));
  EXPECT_TRUE(same_bits(cuda().sum_squares(dx.data(), n), cuda().sum_squares(dx.data(), n)));
  EXPECT_TRUE(same_bits(cuda().dot(dx.data(), dy.data(), n), cuda().dot(dx.data(), dy.data(), n)));
  auto bad = x;
  for (size_t i = 0; i < n; i += 101) bad[i] = i % 3 == 0 ? std::nanf("") : (i % 3 == 1 ? INFINITY : -INFINITY);
  Buffer<float> dbad = on_device(bad);
  EXPECT_EQ(cuda().count_nonfinite(dbad.data(), n), cpu.count_nonfinite(bad.data(), n));
}

INSTANTIATE_TEST_SUITE_P(Sizes, CudaReductionTest,
                         ::testing::Values(size_t{0}, size_t{1}, size_t{257}, size_t{100000}, size_t{5000000}));

TEST_F(CudaOpsTest, ReductionsAccumulateInDouble) {
  Buffer<float> d = on_device({1e8f, 1.0f, 1.0f, -1e8f});
  EXPECT_EQ(cuda().sum(d.data(), 4), 2.0);
}

class CudaSoftmaxTest : public CudaOpsTest, public ::testing::WithParamInterface<int> {};

TEST_P(CudaSoftmaxTest, MatchesCpu) {
  const int cols = GetParam(), rows = 203;
  for (const bool coarse : {false, true}) {  // coarse: many tied maxima
    const auto logits = coarse ? coarse_floats(static_cast<size_t>(rows) * cols, 12, 3)
                               : random_floats(static_cast<size_t>(rows) * cols, 12, -10.0f, 10.0f);
    std::vector<int32_t> labels(rows);
    for (int r = 0; r < rows; ++r) labels[r] = (r * 13) % cols;
    std::vector<float> d(logits.size());
    Buffer<float> dlogits = on_device(logits), dd(cuda(), logits.size());
    const LossSums expected = cpu.softmax_cross_entropy({logits.data(), rows, cols}, labels.data(), d.data(), 0.125f);
    const LossSums actual =
        cuda().softmax_cross_entropy({dlogits.data(), rows, cols}, labels.data(), dd.data(), 0.125f);
    EXPECT_TRUE(close_to(actual.loss, expected.loss, 1e-6));
    EXPECT_EQ(actual.correct, expected.correct);
    EXPECT_TRUE(close_to(on_host(dd), d, kBackendTolerance));
    const LossSums without_grad =
        cuda().softmax_cross_entropy({dlogits.data(), rows, cols}, labels.data(), nullptr, 1.0f);
    EXPECT_TRUE(same_bits(without_grad.loss, actual.loss));
    // In place: the gradient overwrites the logits.
    cuda().softmax_cross_entropy({dlogits.data(), rows, cols}, labels.data(), dlogits.data(), 0.125f);
    EXPECT_TRUE(close_to(on_host(dlogits), d, kBackendTolerance));
  }
}

INSTANTIATE_TEST_SUITE_P(Columns, CudaSoftmaxTest, ::testing::Values(1, 10, 128, 1000));

TEST_F(CudaOpsTest, SoftmaxIsStableAndRejectsBadLabels) {
  Buffer<float> logits = on_device({1000.0f, 0.0f, -1000.0f});
  const int32_t label = 0, bad = 3;
  Buffer<float> d(cuda(), 3);
  EXPECT_NEAR(cuda().softmax_cross_entropy({logits.data(), 1, 3}, &label, d.data(), 1.0f).loss, 0.0, 1e-6);
  for (const float v : on_host(d)) EXPECT_TRUE(std::isfinite(v));
  EXPECT_THROW(cuda().softmax_cross_entropy({logits.data(), 1, 3}, &bad, nullptr, 1.0f), std::invalid_argument);
}

TEST_F(CudaOpsTest, RoundToFormatIsBitExact) {
  auto x = random_floats(100000, 13, -70000.0f, 70000.0f);
  const auto tiny = random_floats(10000, 14, -1e-6f, 1e-6f);
  x.insert(x.end(), tiny.begin(), tiny.end());
  for (const float special : {0.0f, -0.0f, INFINITY, -INFINITY, std::nanf(""), 65520.0f, 1e-45f}) x.push_back(special);
  for (const NumberFormat format : {NumberFormat::Fp32, NumberFormat::Bf16, NumberFormat::Fp16}) {
    auto expected = x;
    Buffer<float> d = on_device(x);
    cpu.round_to_format(expected.data(), expected.size(), format);
    cuda().round_to_format(d.data(), x.size(), format);
    EXPECT_TRUE(bit_identical(on_host(d), expected)) << to_string(format);
  }
}

TEST_F(CudaOpsTest, OptimizerUpdates) {
  const size_t n = 50000;
  const auto g = random_floats(n, 15), w0 = random_floats(n, 16), m0 = random_floats(n, 17, -0.1f, 0.1f);
  const auto v0 = random_floats(n, 18, 0.0f, 0.01f);
  for (const bool nesterov : {false, true}) {
    auto w = w0, v = m0;
    Buffer<float> dw = on_device(w0), dg = on_device(g), dv = on_device(m0);
    cpu.sgd_momentum_update(w.data(), g.data(), v.data(), n, 0.1f, 0.9f, 0.01f, nesterov);
    cuda().sgd_momentum_update(dw.data(), dg.data(), dv.data(), n, 0.1f, 0.9f, 0.01f, nesterov);
    EXPECT_TRUE(close_to(on_host(dw), w, kBackendTolerance));
    EXPECT_TRUE(close_to(on_host(dv), v, kBackendTolerance));
  }
  for (const bool decoupled : {false, true}) {
    auto w = w0, m = m0, v = v0;
    Buffer<float> dw = on_device(w0), dg = on_device(g), dm = on_device(m0), dv = on_device(v0);
    cpu.adam_update(w.data(), g.data(), m.data(), v.data(), n, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.1f, decoupled, 0.19f,
                    0.002f);
    cuda().adam_update(dw.data(), dg.data(), dm.data(), dv.data(), n, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.1f, decoupled,
                       0.19f, 0.002f);
    EXPECT_TRUE(close_to(on_host(dw), w, kBackendTolerance));
    EXPECT_TRUE(close_to(on_host(dm), m, kBackendTolerance));
    EXPECT_TRUE(close_to(on_host(dv), v, kBackendTolerance));
  }
  auto m = m0, v = v0;
  std::vector<float> u(n);
  Buffer<float> dw = on_device(w0), dg = on_device(g), dm = on_device(m0), dv = on_device(v0), du(cuda(), n);
  cpu.lamb_direction(w0.data(), g.data(), m.data(), v.data(), u.data(), n, 0.9f, 0.999f, 1e-6f, 0.01f, 0.5f, 0.2f);
  cuda().lamb_direction(dw.data(), dg.data(), dm.data(), dv.data(), du.data(), n, 0.9f, 0.999f, 1e-6f, 0.01f, 0.5f,
                        0.2f);
  EXPECT_TRUE(close_to(on_host(du), u, kBackendTolerance));
  EXPECT_TRUE(close_to(on_host(dm), m, kBackendTolerance));
  EXPECT_TRUE(close_to(on_host(dv), v, kBackendTolerance));
}

}  // namespace
}  // namespace dtsim::gpu
