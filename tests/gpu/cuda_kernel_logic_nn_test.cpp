// The CUDA convolution, pooling, layer norm and embedding logic run on the host (see host_kernel_emulation.hpp),
// against the naive contract implementations of nn_reference.hpp and, once cpu_ops_nn.cpp implements them, against
// CpuOps<float>; the attention kernels' plans and the rotary kernel against CpuOps<float>. No GPU needed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <ostream>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "gpu/cuda_kernel_math_attention.hpp"
#include "tests/gpu/host_kernel_emulation.hpp"
#include "tests/gpu/nn_reference.hpp"
#include "tests/gpu/test_support.hpp"

namespace dtsim::gpu {
namespace {

namespace emu = host_emulation;
using testing_support::bit_identical;
using testing_support::close_to;
using testing_support::coarse_floats;
using testing_support::cpu_reference_ran;
using testing_support::random_floats;

constexpr double kTight = 1e-6;

// ---- convolution ------------------------------------------------------------------------------------------------

struct ConvCase {
  ConvShape shape;
  int chunk;  // samples per chunk, as conv_samples_per_chunk would choose for some scratch limit
};

class ConvLogicTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvLogicTest, PlanWithHostExecutorMatchesReference) {
  const ConvShape s = GetParam().shape;
  const int chunk = GetParam().chunk;
  const kernels::ConvGeometry g = kernels::conv_geometry(s);
  const auto x = random_floats(static_cast<size_t>(s.batch) * g.input_size(), 21);
  const auto w = random_floats(static_cast<size_t>(s.out_channels) * g.patch_size(), 22);
  const auto bias = random_floats(s.out_channels, 23);
  const auto dy = random_floats(static_cast<size_t>(s.batch) * g.output_size(), 24);
  std::vector<float> scratch(static_cast<size_t>(chunk) * g.col_size(), std::nanf(""));
  emu::HostExec exec;

  std::vector<float> y(dy.size(), std::nanf(""));
  kernels::conv2d_forward_plan(exec, g, s.batch, chunk, x.data(), w.data(), bias.data(), y.data(), scratch.data());
  EXPECT_TRUE(close_to(y, nn_reference::conv2d_forward(s, x, w, bias.data()), kTight));

  std::vector<float> dx(x.size(), std::nanf("")), dw(w.size(), std::nanf("")), dbias(bias.size(), std::nanf(""));
  kernels::conv2d_backward_plan(exec, g, s.batch, chunk, x.data(), w.data(), dy.data(), dx.data(), dw.data(),
                                dbias.data(), scratch.data());
  const nn_reference::ConvGrads expected = nn_reference::conv2d_backward(s, x, w, dy);
  EXPECT_TRUE(close_to(dx, expected.dx, kTight));
  EXPECT_TRUE(close_to(dw, expected.dw, kTight));
  EXPECT_TRUE(close_to(dbias, expected.dbias, kTight));

  CpuOps<float> cpu;
  std::vector<float> y_cpu(y.size()), dx_cpu(dx.size()), dw_cpu(dw.size()), dbias_cpu(dbias.size());
  if (cpu_reference_ran("conv2d", [&] {
        std::vector<float> cpu_scratch(cpu.conv2d_scratch_size(s));
        cpu.conv2d_forward(s, x.data(), w.data(), bias.data(), y_cpu.data(), cpu_scratch.data());
        cpu.conv2d_backward(s, x.data(), w.data(), dy.data(), dx_cpu.data(), dw_cpu.data(), dbias_cpu.data(),
                            cpu_scratch.data());
      })) {
    EXPECT_TRUE(close_to(y, y_cpu, 1e-5));
    EXPECT_TRUE(close_to(dx, dx_cpu, 1e-5));
    EXPECT_TRUE(close_to(dw, dw_cpu, 1e-5));
    EXPECT_TRUE(close_to(dbias, dbias_cpu, 1e-5));
  }
}

ConvShape conv(int batch, int c, int h, int w, int oc, int kh, int kw, int stride, int pad) {
  ConvShape s;
  s.batch = batch, s.in_channels = c, s.height = h, s.width = w, s.out_channels = oc;
  s.kernel_h = kh, s.kernel_w = kw, s.stride = stride, s.pad = pad;
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvLogicTest,
    ::testing::Values(ConvCase{conv(3, 2, 7, 6, 4, 3, 3, 1, 1), 3},   // "same" convolution, one chunk
                      ConvCase{conv(3, 2, 7, 6, 4, 3, 2, 2, 1), 2},   // rectangular kernel, stride 2, uneven chunks
                      ConvCase{conv(4, 3, 5, 5, 2, 5, 5, 1, 0), 1},   // kernel as large as the input, chunk of one
                      ConvCase{conv(2, 1, 8, 9, 3, 2, 3, 3, 2), 2},   // stride larger than the kernel: gaps
                      ConvCase{conv(5, 4, 6, 6, 8, 1, 1, 1, 0), 3})); // 1×1 convolution

TEST(CudaKernelLogic, ConvChunkSizes) {
  EXPECT_EQ(kernels::conv_samples_per_chunk(100, 8, 1000), 8);   // everything fits
  EXPECT_EQ(kernels::conv_samples_per_chunk(100, 8, 350), 3);    // three at a time
  EXPECT_EQ(kernels::conv_samples_per_chunk(100, 8, 10), 1);     // never below one sample
  EXPECT_EQ(kernels::conv_samples_per_chunk(100, 1, 1 << 20), 1);
}

// ---- pooling ------------------------------------------------------------------------------------------------------

class PoolLogicTest : public ::testing::TestWithParam<PoolShape> {};

TEST_P(PoolLogicTest, GathersMatchReferenceScatters) {
  const PoolShape s = GetParam();
  const kernels::PoolGeometry g = kernels::pool_geometry(s);
  const size_t in = static_cast<size_t>(s.batch) * s.channels * g.in_plane();
  const size_t out = static_cast<size_t>(s.batch) * s.channels * g.out_plane();
  const auto x = coarse_floats(in, 31, 3);  // ties in most windows: the first maximum must win
  const auto dy = random_floats(out, 32);

  std::vector<float> y(out), dx(in);
  emu::run_every_index(out, kernels::MaxPoolForwardElement{x.data(), y.data(), g});
  EXPECT_TRUE(bit_identical(y, nn_reference::max_pool_forward(s, x)));
  emu::run_every_index(in, kernels::MaxPoolBackwardElement{x.data(), y.data(), dy.data(), dx.data(), g});
  EXPECT_TRUE(bit_identical(dx, nn_reference::max_pool_backward(s, x, y, dy)));

  CpuOps<float> cpu;
  std::vector<float> y_cpu(out), dx_cpu(in);
  if (cpu_reference_ran("max_pool", [&] {
        cpu.max_pool_forward(s, x.data(), y_cpu.data());
        cpu.max_pool_backward(s, x.data(), y_cpu.data(), dy.data(), dx_cpu.data());
      })) {
    EXPECT_TRUE(bit_identical(y, y_cpu));
    EXPECT_TRUE(close_to(dx, dx_cpu, kTight));  // same routing; overlapping windows may add in another order
  }

  const auto xr = random_floats(in, 33);
  emu::run_every_index(out, kernels::AvgPoolForwardElement{xr.data(), y.data(), g});
  EXPECT_TRUE(close_to(y, nn_reference::avg_pool_forward(s, xr), kTight));
  emu::run_every_index(in, kernels::AvgPoolBackwardElement{dy.data(), dx.data(), g});
  EXPECT_TRUE(close_to(dx, nn_reference::avg_pool_backward(s, dy), kTight));
  if (cpu_reference_ran("avg_pool", [&] {
        cpu.avg_pool_forward(s, xr.data(), y_cpu.data());
        cpu.avg_pool_backward(s, dy.data(), dx_cpu.data());
      })) {
    EXPECT_TRUE(close_to(y, y_cpu, kTight));
    EXPECT_TRUE(close_to(dx, dx_cpu, kTight));
  }
}

PoolShape pool(int batch, int channels, int h, int w, int kernel, int stride) {
  PoolShape s;
  s.batch = batch, s.channels = channels, s.height = h, s.width = w, s.kernel = kernel, s.stride = stride;
  return s;
}

INSTANTIATE_TEST_SUITE_P(Shapes, PoolLogicTest,
                         ::testing::Values(pool(2, 3, 8, 8, 2, 2),    // the usual 2×2
                                           pool(2, 2, 7, 9, 2, 2),    // odd sizes: last row and column unused
                                           pool(1, 3, 7, 7, 3, 1),    // overlapping windows accumulate
                                           pool(2, 2, 9, 8, 3, 2),    // overlapping, stride 2
                                           pool(1, 2, 10, 11, 2, 3)));  // gaps between windows

TEST(CudaKernelLogic, CoveringWindowsMatchBruteForce) {
  for (int kernel = 1; kernel <= 4; ++kernel)
    for (int stride = 1; stride <= 4; ++stride)
      for (int size = kernel; size <= 12; ++size) {
        const int windows = (size - kernel) / stride + 1;
        for (int i = 0; i < size; ++i) {
          int lo = windows, hi = -1;
          for (int o = 0; o < windows; ++o)
            if (o * stride <= i && i < o * stride + kernel) lo = std::min(lo, o), hi = std::max(hi, o);
          const int first = kernels::first_covering_window(i, kernel, stride);
          const int last = kernels::last_covering_window(i, stride, windows);
          if (hi < 0) {
            EXPECT_GT(first, last) << kernel << " " << stride << " " << size << " " << i;
          } else {
            EXPECT_EQ(first, lo) << kernel << " " << stride << " " << size << " " << i;
            EXPECT_EQ(last, hi) << kernel << " " << stride << " " << size << " " << i;
          }
        }
      }
}

// ---- layer norm ---------------------------------------------------------------------------------------------------

class LayerNormLogicTest : public ::testing::TestWithParam<int> {};

TEST_P(LayerNormLogicTest, RowBlocksMatchReference) {
  const int rows = 11, cols = GetParam();
  const float eps = 1e-5f;
  const size_t n = static_cast<size_t>(rows) * cols;
  auto x = random_floats(n, 41, -2.0f, 2.0f);
  for (size_t i = 0; i < n; ++i) x[i] += 3.0f;  // an offset mean, as in real activations
  const auto gamma = random_floats(cols, 42, 0.5f, 1.5f), beta = random_floats(cols, 43), dy = random_floats(n, 44);

  std::vector<float> y(n), dx(n), dgamma(cols), dbeta(cols);
  emu::layer_norm_forward(x.data(), gamma.data(), beta.data(), y.data(), rows, cols, eps);
  EXPECT_TRUE(close_to(y, nn_reference::layer_norm_forward(x, gamma, beta, rows, cols, eps), kTight));
  emu::layer_norm_backward(x.data(), gamma.data(), dy.data(), dx.data(), dgamma.data(), dbeta.data(), rows, cols, eps);
  const nn_reference::LayerNormGrads expected = nn_reference::layer_norm_backward(x, gamma, dy, rows, cols, eps);
  EXPECT_TRUE(close_to(dx, expected.dx, kTight));
  EXPECT_TRUE(close_to(dgamma, expected.dgamma, kTight));
  EXPECT_TRUE(close_to(dbeta, expected.dbeta, kTight));

  CpuOps<float> cpu;
  std::vector<float> y_cpu(n), dx_cpu(n), dgamma_cpu(cols), dbeta_cpu(cols);
  if (cpu_reference_ran("layer_norm", [&] {
        cpu.layer_norm_forward(x.data(), gamma.data(), beta.data(), y_cpu.data(), rows, cols, eps);
        cpu.layer_norm_backward(x.data(), gamma.data(), dy.data(), dx_cpu.data(), dgamma_cpu.data(), dbeta_cpu.data(),
                                rows, cols, eps);
      })) {
    EXPECT_TRUE(close_to(y, y_cpu, 1e-5));
    EXPECT_TRUE(close_to(dx, dx_cpu, 1e-5));
    EXPECT_TRUE(close_to(dgamma, dgamma_cpu, 1e-5));
    EXPECT_TRUE(close_to(dbeta, dbeta_cpu, 1e-5));
  }
}

INSTANTIATE_TEST_SUITE_P(Columns, LayerNormLogicTest, ::testing::Values(1, 7, 128, 300));

// ---- embedding ----------------------------------------------------------------------------------------------------

TEST(CudaKernelLogic, EmbeddingGathersMatchReference) {
  const int vocab = 9, dim = 5;
  // Repeated ids, ids never used, and ids outside the table (negative, = vocab, NaN) that give zero rows.
  const std::vector<float> ids{3, 1, 3, 8, 0, -1, 9, 3, 1, std::nanf(""), 100, 8};
  const int rows = static_cast<int>(ids.size());
  const auto table = random_floats(static_cast<size_t>(vocab) * dim, 51);
  const auto dout = random_floats(static_cast<size_t>(rows) * dim, 52);

  std::vector<float> out(static_cast<size_t>(rows) * dim);
  emu::run_every_index(out.size(), kernels::EmbeddingForwardElement{ids.data(), table.data(), out.data(), vocab, dim});
  EXPECT_TRUE(bit_identical(out, nn_reference::embedding_forward(ids, table, dim, vocab)));

  const kernels::RowsById groups = kernels::group_rows_by_id(ids.data(), rows, vocab);
  EXPECT_EQ(groups.offsets.size(), static_cast<size_t>(vocab) + 1);
  EXPECT_EQ(groups.order, (std::vector<int>{4, 1, 8, 0, 2, 7, 3, 11}));  // by id, then in row order
  std::vector<float> dtable(static_cast<size_t>(vocab) * dim, std::nanf(""));
  emu::run_every_index(dtable.size(), kernels::EmbeddingBackwardElement{groups.offsets.data(), groups.order.data(),
                                                                         dout.data(), dtable.data(), dim});
  EXPECT_TRUE(bit_identical(dtable, nn_reference::embedding_backward(ids, dout, dim, vocab)));

  CpuOps<float> cpu;
  std::vector<float> out_cpu(out.size()), dtable_cpu(dtable.size());
  if (cpu_reference_ran("embedding", [&] {
        cpu.embedding_forward(ids.data(), table.data(), out_cpu.data(), rows, vocab, dim);
        cpu.embedding_backward(ids.data(), dout.data(), dtable_cpu.data(), rows, vocab, dim);
      })) {
    EXPECT_TRUE(bit_identical(out, out_cpu));
    EXPECT_TRUE(close_to(dtable, dtable_cpu, kTight));
  }
}

// ---- attention ----------------------------------------------------------------------------------------------------

struct AttentionLogicCase {
  const char* name;
  int batch, seq, heads, head_dim;
  bool causal;
  std::vector<int32_t> lengths;  // empty: no key lengths
};

// The case's name in gtest's messages instead of its bytes (found by argument-dependent lookup).
void PrintTo(const AttentionLogicCase& c, std::ostream* os) { *os << c.name; }

AttentionShape attention_shape(const AttentionLogicCase& c) {
  AttentionShape s;
  s.batch = c.batch, s.seq = c.seq, s.heads = c.heads, s.head_dim = c.head_dim, s.causal = c.causal;
  s.key_lengths = c.lengths.empty() ? nullptr : c.lengths.data();
  return s;
}

class AttentionLogicTest : public ::testing::TestWithParam<AttentionLogicCase> {};

// The two ways the kernels walk the mask (a query's visible keys, a key's seeing queries) against the contract's
// wording: query i sees key j when j < key length and, when causal, j <= i.
TEST_P(AttentionLogicTest, MaskWalksMatchTheContract) {
  const AttentionShape s = attention_shape(GetParam());
  const kernels::AttentionGeometry g = kernels::attention_geometry(s, s.key_lengths);
  for (int b = 0; b < s.batch; ++b)
    for (int i = 0; i < s.seq; ++i)
      for (int j = 0; j < s.seq; ++j) {
        const int length = s.key_lengths ? s.key_lengths[b] : s.seq;
        const bool sees = j < length && (!s.causal || j <= i);
        EXPECT_EQ(j < g.visible_keys(b, i), sees) << "b " << b << " query " << i << " key " << j;
        EXPECT_EQ(i >= g.first_query_seeing(b, j), sees) << "b " << b << " query " << i << " key " << j;
      }
}

TEST_P(AttentionLogicTest, PlansWithHostExecutorMatchCpuReference) {
  const AttentionShape s = attention_shape(GetParam());
  const kernels::AttentionGeometry g = kernels::attention_geometry(s, s.key_lengths);
  const size_t n = g.elements(), np = g.probs_size();
  ASSERT_EQ(n, static_cast<size_t>(s.batch) * s.seq * s.dim());
  const auto q = random_floats(n, 61, -2.0f, 2.0f), k = random_floats(n, 62, -2.0f, 2.0f), v = random_floats(n, 63);
  const auto dout = random_floats(n, 64);
  emu::HostExec exec;
  // NaN everywhere an output or the scratch starts: every element must be written, and the scratch's old content
  // must not leak into the gradients.
  std::vector<float> probs(np, std::nanf("")), out(n, std::nanf("")), ds(np, std::nanf(""));
  std::vector<float> dq(n, std::nanf("")), dk(n, std::nanf("")), dv(n, std::nanf(""));
  kernels::attention_forward_plan(exec, g, q.data(), k.data(), v.data(), probs.data(), out.data());
  kernels::attention_backward_plan(exec, g, q.data(), k.data(), v.data(), probs.data(), dout.data(), dq.data(),
                                   dk.data(), dv.data(), ds.data());

  CpuOps<float> cpu;
  std::vector<float> probs_cpu(np), out_cpu(n), dq_cpu(n), dk_cpu(n), dv_cpu(n);
  cpu.attention_forward(s, q.data(), k.data(), v.data(), probs_cpu.data(), out_cpu.data());
  cpu.attention_backward(s, q.data(), k.data(), v.data(), probs_cpu.data(), dout.data(), dq_cpu.data(), dk_cpu.data(),
                         dv_cpu.data());
  EXPECT_TRUE(close_to(probs, probs_cpu, kTight));
  EXPECT_TRUE(close_to(out, out_cpu, kTight));
  EXPECT_TRUE(close_to(dq, dq_cpu, kTight));
  EXPECT_TRUE(close_to(dk, dk_cpu, kTight));
  EXPECT_TRUE(close_to(dv, dv_cpu, kTight));
  // The masked probabilities are exact zeros in both.
  for (size_t i = 0; i < np; ++i) {
    if (probs_cpu[i] == 0.0f) {
      EXPECT_EQ(probs[i], 0.0f) << "probs element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Masks, AttentionLogicTest,
    ::testing::Values(AttentionLogicCase{"NoMask", 2, 6, 3, 4, false, {}},
                      AttentionLogicCase{"Causal", 2, 6, 3, 4, true, {}},
                      AttentionLogicCase{"Padding", 3, 6, 2, 5, false, {6, 2, 0}},
                      AttentionLogicCase{"CausalPadding", 4, 7, 2, 3, true, {7, 3, 0, 1}},
                      AttentionLogicCase{"OneToken", 2, 1, 2, 8, true, {1, 0}},
                      AttentionLogicCase{"Long", 2, 40, 2, 16, true, {40, 23}}),
    [](const ::testing::TestParamInfo<AttentionLogicCase>& info) { return info.param.name; });

TEST(RotaryLogic, PairKernelWithHostExecutorMatchesCpuReference) {
  AttentionShape s;
  s.batch = 3, s.seq = 11, s.heads = 2, s.head_dim = 6;
  const kernels::AttentionGeometry g = kernels::attention_geometry(s, nullptr);
  const auto x = random_floats(g.elements(), 81, -2.0f, 2.0f);
  CpuOps<float> cpu;
  for (const bool inverse : {false, true}) {
    std::vector<float> kernel = x, reference = x;
    emu::HostExec exec;
    exec.for_each(g.elements() / 2, kernels::RotaryPair{kernel.data(), g, 500.0, inverse ? -1 : 1}, "rotary");
    cpu.rotary_embedding(s, reference.data(), 500.0, inverse);
    EXPECT_TRUE(close_to(kernel, reference, kTight)) << (inverse ? "inverse" : "forward");
    EXPECT_FALSE(close_to(kernel, x, kTight));  // something turned
  }
}

}  // namespace
}  // namespace dtsim::gpu
