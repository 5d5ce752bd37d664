// Multi-head self-attention of the CPU reference backend against closed forms, a one-head case written out by hand,
// and central finite differences in double. The masks are re-derived here from the contract's wording (query i of
// sequence b sees key j when j < key_lengths[b] and, when causal, j <= i), not taken from the implementation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "tests/gpu/finite_differences.hpp"

namespace dtsim::gpu {
namespace {

using finite_differences::numeric_gradient;
using finite_differences::random_vector;
using finite_differences::relative_error;
using finite_differences::weighted_sum;

AttentionShape attention(int batch, int seq, int heads, int head_dim, bool causal,
                         const std::vector<int32_t>& lengths) {
  AttentionShape s;
  s.batch = batch, s.seq = seq, s.heads = heads, s.head_dim = head_dim, s.causal = causal;
  s.key_lengths = lengths.empty() ? nullptr : lengths.data();
  return s;
}

size_t token_count(const AttentionShape& s) { return static_cast<size_t>(s.batch) * s.seq * s.dim(); }
size_t probs_count(const AttentionShape& s) { return static_cast<size_t>(s.batch) * s.heads * s.seq * s.seq; }

// The contract's mask, spelled out.
bool sees(const AttentionShape& s, int b, int i, int j) {
  const int length = s.key_lengths ? s.key_lengths[b] : s.seq;
  return j < length && (!s.causal || j <= i);
}

int visible_count(const AttentionShape& s, int b, int i) {
  int n = 0;
  for (int j = 0; j < s.seq; ++j) n += sees(s, b, i, j) ? 1 : 0;
  return n;
}

size_t at(const AttentionShape& s, int b, int t, int h, int d) {
  return (static_cast<size_t>(b) * s.seq + t) * s.dim() + static_cast<size_t>(h) * s.head_dim + d;
}

size_t probs_at(const AttentionShape& s, int b, int h, int i, int j) {
  return ((static_cast<size_t>(b) * s.heads + h) * s.seq + i) * s.seq + j;
}

struct Forward {
  std::vector<double> probs, out;
};

// Outputs start as NaN, so that anything the op fails to overwrite shows.
Forward run_forward(const AttentionShape& s, const std::vector<double>& q, const std::vector<double>& k,
                    const std::vector<double>& v) {
  CpuOps<double> ops;
  Forward f{std::vector<double>(probs_count(s), std::nan("")), std::vector<double>(token_count(s), std::nan(""))};
  ops.attention_forward(s, q.data(), k.data(), v.data(), f.probs.data(), f.out.data());
  return f;
}

// The masks the tests sweep: none, causal, padding (including an empty sequence), both.
struct MaskCase {
  bool causal;
  std::vector<int32_t> lengths;  // empty: no key lengths
};

const std::vector<MaskCase> kMasks = {
    {false, {}}, {true, {}}, {false, {5, 2, 0}}, {true, {5, 2, 0}}, {true, {3, 5, 1}}};

// ---- closed forms -------------------------------------------------------------------------------------------

TEST(CpuOpsAttention, ZeroQueriesGiveEachVisibleKeyEqualWeight) {
  // Every score is 0, so each visible key gets 1/count and out_i is the mean of the visible v_j.
  for (const MaskCase& m : kMasks) {
    SCOPED_TRACE(std::string(m.causal ? "causal" : "not causal") + (m.lengths.empty() ? "" : ", key lengths"));
    const AttentionShape s = attention(3, 5, 2, 3, m.causal, m.lengths);
    const std::vector<double> q(token_count(s), 0.0);
    const auto k = random_vector(token_count(s), 1), v = random_vector(token_count(s), 2);
    const Forward f = run_forward(s, q, k, v);
    for (int b = 0; b < s.batch; ++b)
      for (int h = 0; h < s.heads; ++h)
        for (int i = 0; i < s.seq; ++i) {
          const int count = visible_count(s, b, i);
          for (int j = 0; j < s.seq; ++j)
            EXPECT_NEAR(f.probs[probs_at(s, b, h, i, j)], sees(s, b, i, j) ? 1.0 / count : 0.0, 1e-15);
          for (int d = 0; d < s.head_dim; ++d) {
            double mean = 0.0;
            for (int j = 0; j < s.seq; ++j)
              if (sees(s, b, i, j)) mean += v[at(s, b, j, h, d)] / count;
            EXPECT_NEAR(f.out[at(s, b, i, h, d)], mean, 1e-14) << "b " << b << " h " << h << " i " << i << " d " << d;
          }
        }
  }
}

TEST(CpuOpsAttention, ProbabilityRowsSumToOneOverVisibleKeysAndAreExactlyZeroElsewhere) {
  for (const MaskCase& m : kMasks) {
    SCOPED_TRACE(std::string(m.causal ? "causal" : "not causal") + (m.lengths.empty() ? "" : ", key lengths"));
    const AttentionShape s = attention(3, 5, 2, 4, m.causal, m.lengths);
    const auto q = random_vector(token_count(s), 3, -2.0, 2.0), k = random_vector(token_count(s), 4, -2.0, 2.0),
               v = random_vector(token_count(s), 5);
    const Forward f = run_forward(s, q, k, v);
    for (int b = 0; b < s.batch; ++b)
      for (int h = 0; h < s.heads; ++h)
        for (int i = 0; i < s.seq; ++i) {
          double sum = 0.0;
          for (int j = 0; j < s.seq; ++j) {
            const double p = f.probs[probs_at(s, b, h, i, j)];
            if (sees(s, b, i, j)) {
              EXPECT_GT(p, 0.0);
              sum += p;
            } else {
              EXPECT_EQ(p, 0.0) << "masked key " << j << " of query " << i << ", sequence " << b;
            }
          }
          if (visible_count(s, b, i) == 0) {
            // A query with no key: all-zero probabilities and output.
            EXPECT_EQ(sum, 0.0);
            for (int d = 0; d < s.head_dim; ++d) EXPECT_EQ(f.out[at(s, b, i, h, d)], 0.0);
          } else {
            EXPECT_NEAR(sum, 1.0, 1e-14);
          }
        }
  }
}

TEST(CpuOpsAttention, LargeScoresDoNotOverflow) {
  // q = (30, 30) and k_j = m_j·(1, 1) give the scores q·k_j/√2 = 30√2·m_j; m_j is chosen for 1000, 2000 and 3000.
  // exp of any of them overflows a double, so only a softmax that subtracts the row maximum gets the answer: all
  // the weight on the last key (e^−1000 underflows to 0).
  const AttentionShape s = attention(1, 3, 1, 2, false, {});
  std::vector<double> q(6, 30.0), k(6);
  for (int j = 0; j < 3; ++j) k[2 * j] = k[2 * j + 1] = 1000.0 * (j + 1) / (30.0 * std::sqrt(2.0));
  const std::vector<double> v = {1, -1, 2, -2, 3, -3};
  const Forward f = run_forward(s, q, k, v);
  for (int i = 0; i < s.seq; ++i) {
    EXPECT_EQ(f.probs[probs_at(s, 0, 0, i, 0)], 0.0);
    EXPECT_EQ(f.probs[probs_at(s, 0, 0, i, 1)], 0.0);
    EXPECT_EQ(f.probs[probs_at(s, 0, 0, i, 2)], 1.0);
    EXPECT_EQ(f.out[at(s, 0, i, 0, 0)], 3.0);
    EXPECT_EQ(f.out[at(s, 0, i, 0, 1)], -3.0);
  }
}

// ---- one head, two tokens, head_dim 1, written out ------------------------------------------------------------

// With scalars a_i (queries), b_j (keys), c_j (values) and √1 = 1: p_ij = e^{a_i b_j} / Σ_{visible j'} e^{a_i b_j'},
// out_i = Σ_j p_ij c_j. Differentiating: ∂out_i/∂a_i = Σ_j p_ij b_j (c_j − out_i), ∂out_i/∂b_j = a_i p_ij (c_j −
// out_i), ∂out_i/∂c_j = p_ij. So with dout = g: dq_i = g_i Σ_j p_ij b_j (c_j − out_i), dk_j = Σ_i g_i a_i p_ij
// (c_j − out_i), dv_j = Σ_i g_i p_ij.
TEST(CpuOpsAttention, OneHeadByHand) {
  const double a[2] = {0.3, -0.7}, kb[2] = {0.5, -1.1}, c[2] = {2.0, -1.0}, g[2] = {0.4, -1.3};
  for (const bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "not causal");
    const AttentionShape s = attention(1, 2, 1, 1, causal, {});
    double p[2][2], out[2];
    for (int i = 0; i < 2; ++i) {
      const double e0 = std::exp(a[i] * kb[0]), e1 = (causal && i == 0) ? 0.0 : std::exp(a[i] * kb[1]);
      p[i][0] = e0 / (e0 + e1);
      p[i][1] = e1 / (e0 + e1);
      out[i] = p[i][0] * c[0] + p[i][1] * c[1];
    }
    const std::vector<double> q(a, a + 2), k(kb, kb + 2), v(c, c + 2), dout(g, g + 2);
    const Forward f = run_forward(s, q, k, v);
    for (int i = 0; i < 2; ++i) {
      EXPECT_NEAR(f.out[i], out[i], 1e-15);
      for (int j = 0; j < 2; ++j) EXPECT_NEAR(f.probs[i * 2 + j], p[i][j], 1e-15);
    }
    if (causal) {
      EXPECT_EQ(f.probs[1], 0.0);
    }

    CpuOps<double> ops;
    std::vector<double> dq(2, std::nan("")), dk(2, std::nan("")), dv(2, std::nan(""));
    ops.attention_backward(s, q.data(), k.data(), v.data(), f.probs.data(), dout.data(), dq.data(), dk.data(),
                           dv.data());
    for (int i = 0; i < 2; ++i) {
      double expected = 0.0;
      for (int j = 0; j < 2; ++j) expected += g[i] * p[i][j] * kb[j] * (c[j] - out[i]);
      EXPECT_NEAR(dq[i], expected, 1e-15) << "dq " << i;
    }
    for (int j = 0; j < 2; ++j) {
      double expected_k = 0.0, expected_v = 0.0;
      for (int i = 0; i < 2; ++i) {
        expected_k += g[i] * a[i] * p[i][j] * (c[j] - out[i]);
        expected_v += g[i] * p[i][j];
      }
      EXPECT_NEAR(dk[j], expected_k, 1e-15) << "dk " << j;
      EXPECT_NEAR(dv[j], expected_v, 1e-15) << "dv " << j;
    }
  }
}

// ---- gradients ----------------------------------------------------------------------------------------------

struct GradientCase {
  const char* name;
  bool causal;
  std::vector<int32_t> lengths;
};

// The case's name in gtest's messages instead of its bytes (found by argument-dependent lookup).
void PrintTo(const GradientCase& c, std::ostream* os) { *os << c.name; }

class AttentionGradientTest : public ::testing::TestWithParam<GradientCase> {};

// L = Σ w ⊙ out with random w, so dout = w; dq, dk and dv against central differences of L.
TEST_P(AttentionGradientTest, BackwardMatchesFiniteDifferences) {
  const AttentionShape s = attention(2, 5, 2, 3, GetParam().causal, GetParam().lengths);
  auto q = random_vector(token_count(s), 11, -1.5, 1.5), k = random_vector(token_count(s), 12, -1.5, 1.5),
       v = random_vector(token_count(s), 13);
  const auto w = random_vector(token_count(s), 14);
  CpuOps<double> ops;
  std::vector<double> probs(probs_count(s)), out(token_count(s));
  const auto objective = [&] {
    ops.attention_forward(s, q.data(), k.data(), v.data(), probs.data(), out.data());
    return weighted_sum(out, w);
  };
  objective();
  std::vector<double> dq(token_count(s), std::nan("")), dk(dq), dv(dq);
  ops.attention_backward(s, q.data(), k.data(), v.data(), probs.data(), w.data(), dq.data(), dk.data(), dv.data());
  EXPECT_LT(relative_error(dq, numeric_gradient(q, objective)), 1e-6);
  EXPECT_LT(relative_error(dk, numeric_gradient(k, objective)), 1e-6);
  EXPECT_LT(relative_error(dv, numeric_gradient(v, objective)), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Masks, AttentionGradientTest,
                         ::testing::Values(GradientCase{"NoMask", false, {}}, GradientCase{"Causal", true, {}},
                                           GradientCase{"Padding", false, {5, 3}},
                                           GradientCase{"CausalPadding", true, {4, 2}},
                                           GradientCase{"EmptySequence", false, {0, 4}}),
                         [](const ::testing::TestParamInfo<GradientCase>& info) { return info.param.name; });

// ---- masking --------------------------------------------------------------------------------------------------

TEST(CpuOpsAttention, PaddingKeysAndValuesAreIgnored) {
  const std::vector<int32_t> lengths = {3, 5};
  const AttentionShape s = attention(2, 5, 2, 3, false, lengths);
  const auto q = random_vector(token_count(s), 21), k = random_vector(token_count(s), 22),
             v = random_vector(token_count(s), 23), dout = random_vector(token_count(s), 24);
  auto k2 = k, v2 = v;
  for (int t = 3; t < 5; ++t)
    for (int c = 0; c < s.dim(); ++c) {
      k2[at(s, 0, t, 0, c)] += 100.0;
      v2[at(s, 0, t, 0, c)] -= 50.0;
    }
  const Forward f = run_forward(s, q, k, v), f2 = run_forward(s, q, k2, v2);
  EXPECT_EQ(f.out, f2.out);
  EXPECT_EQ(f.probs, f2.probs);

  CpuOps<double> ops;
  std::vector<double> dq(token_count(s)), dk(dq), dv(dq), dq2(dq), dk2(dq), dv2(dq);
  ops.attention_backward(s, q.data(), k.data(), v.data(), f.probs.data(), dout.data(), dq.data(), dk.data(),
                         dv.data());
  ops.attention_backward(s, q.data(), k2.data(), v2.data(), f2.probs.data(), dout.data(), dq2.data(), dk2.data(),
                         dv2.data());
  EXPECT_EQ(dq, dq2);
  EXPECT_EQ(dk, dk2);
  EXPECT_EQ(dv, dv2);
  // The padding keys get no gradient at all; the valid ones do.
  for (int t = 0; t < 5; ++t)
    for (int c = 0; c < s.dim(); ++c) {
      if (t >= 3) {
        EXPECT_EQ(dk[at(s, 0, t, 0, c)], 0.0);
        EXPECT_EQ(dv[at(s, 0, t, 0, c)], 0.0);
      } else {
        EXPECT_NE(dv[at(s, 0, t, 0, c)], 0.0);
      }
    }
}

TEST(CpuOpsAttention, CausalQueriesIgnoreLaterTokens) {
  const AttentionShape s = attention(2, 6, 2, 4, true, {});
  const auto q = random_vector(token_count(s), 31), k = random_vector(token_count(s), 32),
             v = random_vector(token_count(s), 33);
  auto k2 = k, v2 = v;
  const int last = s.seq - 1;
  for (int b = 0; b < s.batch; ++b)
    for (int c = 0; c < s.dim(); ++c) {
      k2[at(s, b, last, 0, c)] += 3.0;
      v2[at(s, b, last, 0, c)] += 5.0;
    }
  const Forward f = run_forward(s, q, k, v), f2 = run_forward(s, q, k2, v2);
  for (int b = 0; b < s.batch; ++b)
    for (int i = 0; i < s.seq; ++i)
      for (int c = 0; c < s.dim(); ++c) {
        const size_t e = at(s, b, i, 0, c);
        if (i < last) {
          EXPECT_EQ(f.out[e], f2.out[e]) << "query " << i << " sees the last token";
        } else {
          EXPECT_NE(f.out[e], f2.out[e]) << "the last query does not see itself";
        }
      }
}

// ---- float and contract checks --------------------------------------------------------------------------------

TEST(CpuOpsAttention, FloatAgreesWithDouble) {
  const std::vector<int32_t> lengths = {7, 4, 0};
  const AttentionShape s = attention(3, 7, 3, 8, true, lengths);
  const auto q = random_vector(token_count(s), 41), k = random_vector(token_count(s), 42),
             v = random_vector(token_count(s), 43), dout = random_vector(token_count(s), 44);
  const auto to_float = [](const std::vector<double>& x) { return std::vector<float>(x.begin(), x.end()); };
  const auto to_double = [](const std::vector<float>& x) { return std::vector<double>(x.begin(), x.end()); };
  const auto qf = to_float(q), kf = to_float(k), vf = to_float(v), doutf = to_float(dout);

  CpuOps<double> ops;
  std::vector<double> probs(probs_count(s)), out(token_count(s)), dq(out), dk(out), dv(out);
  ops.attention_forward(s, q.data(), k.data(), v.data(), probs.data(), out.data());
  ops.attention_backward(s, q.data(), k.data(), v.data(), probs.data(), dout.data(), dq.data(), dk.data(), dv.data());
  CpuOps<float> opsf;
  std::vector<float> probsf(probs.size()), outf(out.size()), dqf(out.size()), dkf(out.size()), dvf(out.size());
  opsf.attention_forward(s, qf.data(), kf.data(), vf.data(), probsf.data(), outf.data());
  opsf.attention_backward(s, qf.data(), kf.data(), vf.data(), probsf.data(), doutf.data(), dqf.data(), dkf.data(),
                          dvf.data());
  EXPECT_LT(relative_error(to_double(probsf), probs), 1e-6);
  EXPECT_LT(relative_error(to_double(outf), out), 1e-6);
  EXPECT_LT(relative_error(to_double(dqf), dq), 1e-5);
  EXPECT_LT(relative_error(to_double(dkf), dk), 1e-5);
  EXPECT_LT(relative_error(to_double(dvf), dv), 1e-5);
}

TEST(CpuOpsAttention, RejectsBadShapesAndKeyLengths) {
  CpuOps<double> ops;
  std::vector<double> x(64), probs(64);
  const std::vector<int32_t> too_long = {3, 5}, negative = {-1, 2};
  EXPECT_THROW(ops.attention_forward(attention(2, 4, 1, 1, false, too_long), x.data(), x.data(), x.data(),
                                     probs.data(), x.data()),
               std::invalid_argument);
  EXPECT_THROW(ops.attention_backward(attention(2, 4, 1, 1, true, negative), x.data(), x.data(), x.data(),
                                      probs.data(), x.data(), x.data(), x.data(), x.data()),
               std::invalid_argument);
  EXPECT_THROW(ops.attention_forward(attention(1, 4, 1, 0, false, {}), x.data(), x.data(), x.data(), probs.data(),
                                     x.data()),
               std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::gpu
