// The CUDA backend's per-thread logic run on the host (see host_kernel_emulation.hpp) against CpuOps<float>.
// These tests need no GPU: they check the index arithmetic, the reduction trees and the cuBLAS argument mapping
// of the CUDA kernels wherever dtsim is built. The same arithmetic compiled by the host compiler agrees with the
// CPU reference much more tightly than the 1e-4 the device tests allow, so the tolerance here is 1e-6.
// Convolution, pooling, layer norm and embedding are in cuda_kernel_logic_nn_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "tests/gpu/host_kernel_emulation.hpp"
#include "tests/gpu/test_support.hpp"

namespace dtsim::gpu {
namespace {

namespace emu = host_emulation;
using testing_support::bit_identical;
using testing_support::close_to;
using testing_support::coarse_floats;
using testing_support::random_floats;

constexpr double kTight = 1e-6;

class GemmMappingTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

// The row-major → column-major operand swap, fed to a GEMM written from cuBLAS's definition, gives CpuOps' GEMM.
TEST_P(GemmMappingTest, ColumnMajorCallComputesTheRowMajorProduct) {
  const auto [ta, tb] = GetParam();
  const int m = 7, k = 5, n = 3;
  const int a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
  const auto a = random_floats(a_rows * a_cols, 1), b = random_floats(b_rows * b_cols, 2);
  auto expected = random_floats(m * n, 3);
  auto actual = expected;
  const Transpose ta_ = ta ? Transpose::Yes : Transpose::No, tb_ = tb ? Transpose::Yes : Transpose::No;
  CpuOps<float>().gemm(ta_, tb_, 0.5f, {a.data(), a_rows, a_cols}, {b.data(), b_rows, b_cols}, 2.0f,
                       {expected.data(), m, n});
  emu::gemm_strided_batched(ta_, tb_, m, n, k, 0.5f, a.data(), 0, b.data(), 0, 2.0f, actual.data(), 0, 1);
  EXPECT_TRUE(close_to(actual, expected, kTight));
}

INSTANTIATE_TEST_SUITE_P(AllTransposes, GemmMappingTest, ::testing::Combine(::testing::Bool(), ::testing::Bool()));

TEST(CudaKernelLogic, DenseAlgebraElementwise) {
  CpuOps<float> cpu;
  const int rows = 9, cols = 13;
  const size_t n = static_cast<size_t>(rows) * cols;
  const auto x = random_floats(n, 4), bias = random_floats(cols, 5);
  auto y_cpu = random_floats(n, 6);
  auto y_emu = y_cpu;
  cpu.axpy(0.75f, x.data(), y_cpu.data(), n);
  emu::run_every_index(n, kernels::AxpyElement{0.75f, x.data(), y_emu.data()});
  EXPECT_TRUE(bit_identical(y_emu, y_cpu));
  cpu.scale(-1.5f, y_cpu.data(), n);
  emu::run_every_index(n, kernels::ScaleElement{-1.5f, y_emu.data()});
  EXPECT_TRUE(bit_identical(y_emu, y_cpu));
  cpu.add_row_vector({y_cpu.data(), rows, cols}, bias.data());
  emu::run_every_index(n, kernels::AddRowVectorElement{y_emu.data(), bias.data(), cols});
  EXPECT_TRUE(bit_identical(y_emu, y_cpu));
  for (const float beta : {0.0f, 1.0f, 0.5f}) {
    std::vector<float> out_cpu(cols, beta == 0.0f ? std::nanf("") : 2.0f), out_emu = out_cpu;
    cpu.column_sums({y_cpu.data(), rows, cols}, beta, out_cpu.data());
    emu::run_every_index(cols, kernels::ColumnSumsColumn{y_emu.data(), rows, cols, beta, out_emu.data()});
    EXPECT_TRUE(bit_identical(out_emu, out_cpu)) << "beta " << beta;
  }
  std::vector<float> filled(n);
  emu::run_every_index(n, kernels::FillElement{filled.data(), 3.25f});
  EXPECT_EQ(filled, std::vector<float>(n, 3.25f));
}

TEST(CudaKernelLogic, Activations) {
  CpuOps<float> cpu;
  const size_t n = 1000;
  const auto x = random_floats(n, 7, -6.0f, 6.0f), dy = random_floats(n, 8);
  std::vector<float> y_cpu(n), y_emu(n), dx_cpu(n), dx_emu(n);

  cpu.relu_forward(x.data(), y_cpu.data(), n);
  emu::run_every_index(n, kernels::ReluForwardElement{x.data(), y_emu.data()});
  EXPECT_TRUE(bit_identical(y_emu, y_cpu));
  cpu.relu_backward(y_cpu.data(), dy.data(), dx_cpu.data(), n);
  emu::run_every_index(n, kernels::ReluBackwardElement{y_cpu.data(), dy.data(), dx_emu.data()});
  EXPECT_TRUE(bit_identical(dx_emu, dx_cpu));

  cpu.gelu_forward(x.data(), y_cpu.data(), n);
  emu::run_every_index(n, kernels::GeluForwardElement{x.data(), y_emu.data()});
  EXPECT_TRUE(close_to(y_emu, y_cpu, kTight));
  cpu.gelu_backward(x.data(), dy.data(), dx_cpu.data(), n);
  emu::run_every_index(n, kernels::GeluBackwardElement{x.data(), dy.data(), dx_emu.data()});
  EXPECT_TRUE(close_to(dx_emu, dx_cpu, kTight));

  cpu.tanh_forward(x.data(), y_cpu.data(), n);
  emu::run_every_index(n, kernels::TanhForwardElement{x.data(), y_emu.data()});
  EXPECT_TRUE(close_to(y_emu, y_cpu, kTight));
  cpu.tanh_backward(y_cpu.data(), dy.data(), dx_cpu.data(), n);
  emu::run_every_index(n, kernels::TanhBackwardElement{y_cpu.data(), dy.data(), dx_emu.data()});
  EXPECT_TRUE(close_to(dx_emu, dx_cpu, kTight));
}

TEST(CudaKernelLogic, RoundToFormatIsBitExactIncludingSpecialValues) {
  CpuOps<float> cpu;
  auto x = random_floats(2000, 9, -70000.0f, 70000.0f);
  const auto tiny = random_floats(500, 10, -1e-6f, 1e-6f);  // fp16 subnormals
  x.insert(x.end(), tiny.begin(), tiny.end());
  for (const float special : {0.0f, -0.0f, INFINITY, -INFINITY, std::nanf(""), 65520.0f, 65504.0f, 1e-45f})
    x.push_back(special);
  for (const NumberFormat format : {NumberFormat::Fp32, NumberFormat::Bf16, NumberFormat::Fp16}) {
    auto expected = x, actual = x;
    cpu.round_to_format(expected.data(), expected.size(), format);
    emu::run_every_index(actual.size(), kernels::RoundToFormatElement{actual.data(), format});
    EXPECT_TRUE(bit_identical(actual, expected)) << to_string(format);
  }
}

TEST(CudaKernelLogic, ReductionGridCoversEveryElement) {
  EXPECT_EQ(kernels::reduce_blocks(0), 1);
  EXPECT_EQ(kernels::reduce_blocks(1), 1);
  EXPECT_EQ(kernels::reduce_blocks(kernels::kReduceThreads), 1);
  EXPECT_EQ(kernels::reduce_blocks(kernels::kReduceThreads + 1), 2);
  EXPECT_EQ(kernels::reduce_blocks(size_t{1} << 40), kernels::kMaxReduceBlocks);
}

class ReductionLogicTest : public ::testing::TestWithParam<size_t> {};

// Sizes below one block, at block boundaries, and beyond the grid cap (each thread then loops).
TEST_P(ReductionLogicTest, TwoPassTreeMatchesSequentialSums) {
  const size_t n = GetParam();
  CpuOps<float> cpu;
  const auto x = random_floats(n, 11), y = random_floats(n, 12);
  EXPECT_TRUE(close_to(emu::reduce(kernels::SumTerm{x.data()}, n), cpu.sum(x.data(), n), 1e-12));
  EXPECT_TRUE(close_to(emu::reduce(kernels::SquareTerm{x.data()}, n), cpu.sum_squares(x.data(), n), 1e-12));
  EXPECT_TRUE(close_to(emu::reduce(kernels::DotTerm{x.data(), y.data()}, n), cpu.dot(x.data(), y.data(), n), 1e-12));
  auto bad = x;
  for (size_t i = 0; i < n; i += 97) bad[i] = i % 3 == 0 ? std::nanf("") : (i % 3 == 1 ? INFINITY : -INFINITY);
  EXPECT_EQ(emu::reduce(kernels::NonfiniteTerm{bad.data()}, n), cpu.count_nonfinite(bad.data(), n));
}

INSTANTIATE_TEST_SUITE_P(Sizes, ReductionLogicTest,
                         ::testing::Values(size_t{0}, size_t{1}, size_t{255}, size_t{256}, size_t{257}, size_t{5000},
                                           size_t{kernels::kReduceThreads} * kernels::kMaxReduceBlocks + 12345));

TEST(CudaKernelLogic, ReductionKeepsDoublePrecision) {
  const std::vector<float> big{1e8f, 1.0f, 1.0f, -1e8f};
  EXPECT_EQ(emu::reduce(kernels::SumTerm{big.data()}, big.size()), 2.0);
}

class SoftmaxLogicTest : public ::testing::TestWithParam<int> {};

// Columns below, at and above the block width; coarse logits so that the first-arg-max tie rule is exercised.
TEST_P(SoftmaxLogicTest, RowBlocksMatchCpuReference) {
  const int cols = GetParam(), rows = 37;
  CpuOps<float> cpu;
  for (const bool coarse : {false, true}) {
    const auto logits = coarse ? coarse_floats(static_cast<size_t>(rows) * cols, 13, 3)
                               : random_floats(static_cast<size_t>(rows) * cols, 13, -8.0f, 8.0f);
    std::vector<int32_t> labels(rows);
    for (int r = 0; r < rows; ++r) labels[r] = (r * 7) % cols;
    std::vector<float> d_cpu(logits.size()), d_emu(logits.size());
    const LossSums expected = cpu.softmax_cross_entropy({logits.data(), rows, cols}, labels.data(), d_cpu.data(), 0.25f);
    const LossSums actual =
        emu::softmax_cross_entropy(logits.data(), rows, cols, labels.data(), d_emu.data(), 0.25f);
    EXPECT_TRUE(close_to(actual.loss, expected.loss, 1e-12));
    EXPECT_EQ(actual.correct, expected.correct);
    EXPECT_TRUE(close_to(d_emu, d_cpu, kTight));
  }
}

INSTANTIATE_TEST_SUITE_P(Columns, SoftmaxLogicTest, ::testing::Values(1, 3, 10, 128, 300));

TEST(CudaKernelLogic, SoftmaxArgMaxFollowsTheReferenceWithNaNs) {
  CpuOps<float> cpu;
  const float nan = std::nanf("");
  // A NaN first (the reference never moves off index 0), NaNs among the values, ties, and an all-NaN row.
  const std::vector<std::vector<float>> rows{
      {nan, 5.0f, 1.0f}, {1.0f, nan, 3.0f}, {2.0f, 7.0f, nan}, {4.0f, 4.0f, 1.0f}, {1.0f, 4.0f, 4.0f}, {nan, nan, nan}};
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int32_t label = 0; label < 3; ++label) {
      const LossSums expected = cpu.softmax_cross_entropy({rows[r].data(), 1, 3}, &label, nullptr, 1.0f);
      const LossSums actual = emu::softmax_cross_entropy(rows[r].data(), 1, 3, &label, nullptr, 1.0f);
      EXPECT_EQ(actual.correct, expected.correct) << "row " << r << " label " << label;
      EXPECT_TRUE(close_to(actual.loss, expected.loss, 1e-12)) << "row " << r << " label " << label;
    }
  }
}

TEST(CudaKernelLogic, OptimizerUpdates) {
  CpuOps<float> cpu;
  const size_t n = 777;
  const auto g = random_floats(n, 14), w0 = random_floats(n, 15), m0 = random_floats(n, 16, -0.1f, 0.1f);
  const auto v0 = random_floats(n, 17, 0.0f, 0.01f);
  for (const bool nesterov : {false, true}) {
    auto w_cpu = w0, v_cpu = m0, w_emu = w0, v_emu = m0;
    cpu.sgd_momentum_update(w_cpu.data(), g.data(), v_cpu.data(), n, 0.1f, 0.9f, 0.01f, nesterov);
    emu::run_every_index(n, kernels::SgdMomentumElement{w_emu.data(), g.data(), v_emu.data(), 0.1f, 0.9f, 0.01f, nesterov});
    EXPECT_TRUE(close_to(w_emu, w_cpu, kTight));
    EXPECT_TRUE(close_to(v_emu, v_cpu, kTight));
  }
  for (const bool decoupled : {false, true}) {
    auto w_cpu = w0, m_cpu = m0, v_cpu = v0, w_emu = w0, m_emu = m0, v_emu = v0;
    cpu.adam_update(w_cpu.data(), g.data(), m_cpu.data(), v_cpu.data(), n, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.1f, decoupled,
                    0.19f, 0.002f);
    emu::run_every_index(n, kernels::AdamElement{w_emu.data(), g.data(), m_emu.data(), v_emu.data(), 1e-3f, 0.9f, 0.999f,
                                                 1e-8f, 0.1f, decoupled, 0.19f, 0.002f});
    EXPECT_TRUE(close_to(w_emu, w_cpu, kTight));
    EXPECT_TRUE(close_to(m_emu, m_cpu, kTight));
    EXPECT_TRUE(close_to(v_emu, v_cpu, kTight));
  }
  auto m_cpu = m0, v_cpu = v0, m_emu = m0, v_emu = v0;
  std::vector<float> u_cpu(n), u_emu(n);
  cpu.lamb_direction(w0.data(), g.data(), m_cpu.data(), v_cpu.data(), u_cpu.data(), n, 0.9f, 0.999f, 1e-6f, 0.01f, 0.5f,
                     0.2f);
  emu::run_every_index(n, kernels::LambDirectionElement{w0.data(), g.data(), m_emu.data(), v_emu.data(), u_emu.data(),
                                                        0.9f, 0.999f, 1e-6f, 0.01f, 0.5f, 0.2f});
  EXPECT_TRUE(close_to(u_emu, u_cpu, kTight));
  EXPECT_TRUE(close_to(m_emu, m_cpu, kTight));
  EXPECT_TRUE(close_to(v_emu, v_cpu, kTight));
}

}  // namespace
}  // namespace dtsim::gpu
