// CudaOps multi-head self-attention on a real GPU against CpuOps<float>: forward and backward with no mask, the causal
// mask, padding through key lengths and both; exact zeros at masked keys; bit-identical reruns; rotary positions both
// ways. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <vector>

#include "tests/gpu/cuda_test_fixture.hpp"

namespace dtsim::gpu {
namespace {

using testing_support::bit_identical;
using testing_support::close_to;
using testing_support::random_floats;

struct AttentionCase {
  const char* name;
  int batch, seq, heads, head_dim;
  bool causal;
  std::vector<int32_t> lengths;  // empty: no key lengths
};

// The case's name in gtest's messages instead of its bytes (found by argument-dependent lookup).
void PrintTo(const AttentionCase& c, std::ostream* os) { *os << c.name; }

AttentionShape attention_shape(const AttentionCase& c) {
  AttentionShape s;
  s.batch = c.batch, s.seq = c.seq, s.heads = c.heads, s.head_dim = c.head_dim, s.causal = c.causal;
  s.key_lengths = c.lengths.empty() ? nullptr : c.lengths.data();
  return s;
}

class CudaAttentionTest : public CudaOpsTest, public ::testing::WithParamInterface<AttentionCase> {};

TEST_P(CudaAttentionTest, ForwardAndBackwardMatchCpuReference) {
  const AttentionShape s = attention_shape(GetParam());
  const size_t n = static_cast<size_t>(s.batch) * s.seq * s.dim();
  const size_t np = static_cast<size_t>(s.batch) * s.heads * s.seq * s.seq;
  const auto q = random_floats(n, 71, -2.0f, 2.0f), k = random_floats(n, 72, -2.0f, 2.0f), v = random_floats(n, 73);
  const auto dout = random_floats(n, 74);
  Buffer<float> q_dev = on_device(q), k_dev = on_device(k), v_dev = on_device(v), dout_dev = on_device(dout);
  // NaN to start with: every element must be overwritten.
  Buffer<float> probs = device_filled(np, std::nanf("")), out = device_filled(n, std::nanf(""));
  Buffer<float> dq = device_filled(n, std::nanf("")), dk = device_filled(n, std::nanf("")),
                dv = device_filled(n, std::nanf(""));

  cuda().attention_forward(s, q_dev.data(), k_dev.data(), v_dev.data(), probs.data(), out.data());
  cuda().attention_backward(s, q_dev.data(), k_dev.data(), v_dev.data(), probs.data(), dout_dev.data(), dq.data(),
                            dk.data(), dv.data());
  const auto probs_host = on_host(probs), out_host = on_host(out);
  const auto dq_host = on_host(dq), dk_host = on_host(dk), dv_host = on_host(dv);

  std::vector<float> probs_cpu(np), out_cpu(n), dq_cpu(n), dk_cpu(n), dv_cpu(n);
  cpu.attention_forward(s, q.data(), k.data(), v.data(), probs_cpu.data(), out_cpu.data());
  cpu.attention_backward(s, q.data(), k.data(), v.data(), probs_cpu.data(), dout.data(), dq_cpu.data(), dk_cpu.data(),
                         dv_cpu.data());
  EXPECT_TRUE(close_to(probs_host, probs_cpu, kBackendTolerance));
  EXPECT_TRUE(close_to(out_host, out_cpu, kBackendTolerance));
  EXPECT_TRUE(close_to(dq_host, dq_cpu, kBackendTolerance));
  EXPECT_TRUE(close_to(dk_host, dk_cpu, kBackendTolerance));
  EXPECT_TRUE(close_to(dv_host, dv_cpu, kBackendTolerance));

  // Masked keys, by the contract's definition, get exact zeros.
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.heads; ++h)
      for (int i = 0; i < s.seq; ++i)
        for (int j = 0; j < s.seq; ++j) {
          const int length = s.key_lengths ? s.key_lengths[b] : s.seq;
          if (j < length && (!s.causal || j <= i)) continue;
          const size_t e = ((static_cast<size_t>(b) * s.heads + h) * s.seq + i) * s.seq + j;
          EXPECT_EQ(probs_host[e], 0.0f) << "b " << b << " h " << h << " query " << i << " key " << j;
        }

  // Deterministic: the same inputs give the same bits.
  cuda().attention_forward(s, q_dev.data(), k_dev.data(), v_dev.data(), probs.data(), out.data());
  cuda().attention_backward(s, q_dev.data(), k_dev.data(), v_dev.data(), probs.data(), dout_dev.data(), dq.data(),
                            dk.data(), dv.data());
  EXPECT_TRUE(bit_identical(on_host(probs), probs_host));
  EXPECT_TRUE(bit_identical(on_host(out), out_host));
  EXPECT_TRUE(bit_identical(on_host(dq), dq_host));
  EXPECT_TRUE(bit_identical(on_host(dk), dk_host));
  EXPECT_TRUE(bit_identical(on_host(dv), dv_host));
}

INSTANTIATE_TEST_SUITE_P(
    Masks, CudaAttentionTest,
    ::testing::Values(AttentionCase{"NoMask", 2, 16, 4, 8, false, {}},
                      AttentionCase{"Causal", 2, 16, 4, 8, true, {}},
                      AttentionCase{"Padding", 3, 16, 2, 16, false, {16, 9, 0}},
                      AttentionCase{"CausalPadding", 3, 16, 2, 16, true, {5, 16, 1}},
                      AttentionCase{"OddSizes", 5, 7, 3, 5, true, {7, 3, 0, 6, 2}},
                      AttentionCase{"GptSized", 4, 128, 12, 64, true, {128, 100, 77, 1}}),
    [](const ::testing::TestParamInfo<AttentionCase>& info) { return info.param.name; });

TEST_F(CudaOpsTest, RotaryEmbeddingMatchesCpuReferenceBothWays) {
  AttentionShape s;
  s.batch = 4, s.seq = 48, s.heads = 4, s.head_dim = 16;
  const size_t n = static_cast<size_t>(s.batch) * s.seq * s.dim();
  const auto x = random_floats(n, 91, -2.0f, 2.0f);
  for (const bool inverse : {false, true}) {
    Buffer<float> x_dev = on_device(x);
    cuda().rotary_embedding(s, x_dev.data(), 10000.0, inverse);
    std::vector<float> reference = x;
    cpu.rotary_embedding(s, reference.data(), 10000.0, inverse);
    EXPECT_TRUE(close_to(on_host(x_dev), reference, kBackendTolerance)) << (inverse ? "inverse" : "forward");
  }
  Buffer<float> odd = device_filled(12, 0.0f);
  s.batch = 1, s.seq = 4, s.heads = 1, s.head_dim = 3;
  EXPECT_THROW(cuda().rotary_embedding(s, odd.data(), 10000.0, false), std::invalid_argument);
}

TEST_F(CudaOpsTest, AttentionRejectsKeyLengthsOutsideTheSequence) {
  Buffer<float> x = device_filled(64, 0.0f), probs = device_filled(64, 0.0f);
  AttentionShape s;
  s.batch = 2, s.seq = 4, s.heads = 1, s.head_dim = 1;
  const std::vector<int32_t> too_long = {3, 5}, negative = {-1, 2};
  s.key_lengths = too_long.data();
  EXPECT_THROW(cuda().attention_forward(s, x.data(), x.data(), x.data(), probs.data(), x.data()),
               std::invalid_argument);
  s.key_lengths = negative.data();
  EXPECT_THROW(cuda().attention_backward(s, x.data(), x.data(), x.data(), probs.data(), x.data(), x.data(), x.data(),
                                         x.data()),
               std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::gpu
