// The group form (synchronous training): averages in rank order, bit for bit what a hand loop gives; majority
// vote, shared-seed random-k and the narrow-format sum of fp16 on constructed cases; error feedback's identity
// (Σ transmitted + residual = Σ gradients) for every compressor, alone and in a group; determinism by seed;
// the contribute/combine contract.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/compression/compression.hpp"
#include "models/random.hpp"

namespace dtsim::models {
namespace {

// A 4 × 5 weight and a 4-value bias.
const std::vector<TensorLayout> kLayouts = {{{"w", 0, 20, false}, 4, 5}, {{"b", 20, 4, true}, 0, 0}};
constexpr size_t kParams = 24;

template <class T>
std::vector<T> gradient(uint64_t worker, int64_t step, uint64_t salt = 0) {
  Rng rng(derive_seed(salt, "group-test", worker), "step", static_cast<uint64_t>(step));
  std::vector<T> g(kParams);
  for (T& v : g) v = static_cast<T>(rng.normal());
  return g;
}

CompressionSettings of(CompressorKind kind) {
  CompressionSettings s;
  s.kind = kind;
  s.ratio = 0.25;
  return s;
}

// Every kind, with the variants that change its code path.
std::vector<std::pair<std::string, CompressionSettings>> every_compressor() {
  std::vector<std::pair<std::string, CompressionSettings>> all;
  for (const CompressorKind k : {CompressorKind::None, CompressorKind::Fp16, CompressorKind::Bf16,
                                 CompressorKind::TopK, CompressorKind::RandomK, CompressorKind::Qsgd,
                                 CompressorKind::Sign, CompressorKind::ScaledSign, CompressorKind::Signum,
                                 CompressorKind::PowerSgd})
    all.push_back({to_string(k), of(k)});
  CompressionSettings s = of(CompressorKind::Fp16);
  s.predivide = true;
  all.push_back({"fp16 predivide", s});
  s = of(CompressorKind::TopK);
  s.sampled_threshold = true;
  all.push_back({"topk sampled", s});
  s = of(CompressorKind::RandomK);
  s.unbiased = true;
  s.shared_indices = false;
  all.push_back({"randomk unbiased own indices", s});
  s = of(CompressorKind::Qsgd);
  s.qsgd_bucket = 3;
  all.push_back({"qsgd buckets", s});
  s = of(CompressorKind::Sign);
  s.majority_vote = true;
  all.push_back({"sign vote", s});
  s = of(CompressorKind::Signum);
  s.majority_vote = true;
  all.push_back({"signum vote", s});
  s = of(CompressorKind::ScaledSign);
  s.sign_of_zero = SignOfZero::Zero;
  all.push_back({"scaled-sign zero", s});
  s = of(CompressorKind::Sign);
  s.majority_vote = true;
  s.sign_of_zero = SignOfZero::Zero;
  all.push_back({"sign vote zero", s});
  s = of(CompressorKind::PowerSgd);
  s.powersgd_rank = 2;
  all.push_back({"powersgd rank 2", s});
  return all;
}

// For the per-worker kinds the group's rank i encodes exactly as a lone Compressor of rank i, and the mean is
// d_0 + d_1 + d_2 (in that order) times 1/3: checked bit for bit, in float, contributions arriving out of order.
TEST(CompressionGroup, AveragesInRankOrderBitForBit) {
  for (const CompressorKind kind : {CompressorKind::None, CompressorKind::TopK, CompressorKind::RandomK,
                                    CompressorKind::Qsgd, CompressorKind::Sign, CompressorKind::ScaledSign}) {
    for (const bool shared : {true, false}) {
      CompressionSettings s = of(kind);
      s.shared_indices = shared;
      gpu::CpuOps<float> ops;
      GroupCompressor<float> group(ops, kLayouts, kParams, s, 3);
      std::vector<std::vector<float>> grads, decoded;
      for (int r = 0; r < 3; ++r) {
        grads.push_back(gradient<float>(r, 4));
        decoded.push_back(grads.back());
        Compressor<float> alone(ops, kLayouts, kParams, s, r);
        alone.compress(decoded.back().data(), 4);
      }
      for (const int r : {2, 0, 1}) group.contribute(r, grads[r].data(), 4);
      std::vector<float> mean(kParams);
      group.combine(mean.data());
      for (size_t j = 0; j < kParams; ++j) {
        float hand = decoded[0][j];
        hand += decoded[1][j];
        hand += decoded[2][j];
        hand *= 1.0f / 3.0f;
        EXPECT_EQ(mean[j], hand) << to_string(kind) << " value " << j;
        for (int r = 0; r < 3; ++r) EXPECT_EQ(grads[r][j], decoded[r][j]);  // what each rank transmitted
      }
    }
  }
}

TEST(CompressionGroup, MajorityVoteOnAConstructedCase) {
  const std::vector<TensorLayout> layout = {{{"x", 0, 5, false}, 0, 0}};
  gpu::CpuOps<double> ops;
  CompressionSettings s = of(CompressorKind::Sign);
  s.majority_vote = true;
  GroupCompressor<double> group(ops, layout, 5, s, 3);
  // Signs per value (0 sends +1): (+,−,+) → +;  (−,−,+) → −;  (+,+,−) → +;  (+,−,−) → −;  (−,+,−) → −.
  std::vector<double> a = {1, -1, 2, 0, -3}, b = {-1, -1, 5, -2, 3}, c = {1, 1, -1, -1, -1}, mean(5);
  group.average({a.data(), b.data(), c.data()}, 0, mean.data());
  EXPECT_EQ(mean, (std::vector<double>{1, -1, 1, -1, -1}));
  EXPECT_EQ(a, (std::vector<double>{1, -1, 1, 1, -1}));  // what worker 0 transmitted
  // Two workers that disagree tie: no step on that value.
  GroupCompressor<double> pair(ops, layout, 5, s, 2);
  a = {1, -1, 2, 0, -3};
  b = {-1, -1, -5, 2, 3};
  pair.average({a.data(), b.data()}, 0, mean.data());
  EXPECT_EQ(mean, (std::vector<double>{0, -1, 0, 1, 0}));
  // With sign_of_zero = zero a worker whose value is 0 abstains: (0,0,0) → 0, (0,−,+) → 0, (0,+,+) → +,
  // (0,0,−) → −; under plus the zeros would have voted +: (+,+,+), (+,−,+), (+,+,+), (+,+,−), all +.
  {
    const std::vector<TensorLayout> four = {{{"x", 0, 4, false}, 0, 0}};
    CompressionSettings z = of(CompressorKind::Sign);
    z.majority_vote = true;
    z.sign_of_zero = SignOfZero::Zero;
    GroupCompressor<double> abstaining(ops, four, 4, z, 3);
    std::vector<double> p = {0, 0, 0, 0}, q = {0, -2, 1, 0}, r = {0, 3, 4, -1}, voted(4);
    abstaining.average({p.data(), q.data(), r.data()}, 0, voted.data());
    EXPECT_EQ(voted, (std::vector<double>{0, 0, 1, -1}));
    z.sign_of_zero = SignOfZero::Plus;
    GroupCompressor<double> folding(ops, four, 4, z, 3);
    p = {0, 0, 0, 0};
    q = {0, -2, 1, 0};
    r = {0, 3, 4, -1};
    folding.average({p.data(), q.data(), r.data()}, 0, voted.data());
    EXPECT_EQ(voted, (std::vector<double>{1, 1, 1, 1}));
  }
  // Signum with β = 0 is sign; a bias below min_tensor_size is averaged, not voted.
  s.kind = CompressorKind::Signum;
  s.signum_momentum = 0.0;
  s.min_tensor_size = 6;
  GroupCompressor<double> filtered(ops, layout, 5, s, 2);
  a = {1, -1, 2, 0, -3};
  b = {-1, -1, -5, 2, 3};
  filtered.average({a.data(), b.data()}, 0, mean.data());
  EXPECT_EQ(mean, (std::vector<double>{0, -1, -1.5, 1, 0}));
}

TEST(CompressionGroup, SharedSeedRandomKUsesTheSameIndicesOnEveryWorker) {
  const std::vector<TensorLayout> layout = {{{"x", 0, 100, false}, 0, 0}};
  gpu::CpuOps<double> ops;
  for (const bool shared : {true, false}) {
    CompressionSettings s = of(CompressorKind::RandomK);
    s.ratio = 0.1;
    s.shared_indices = shared;
    GroupCompressor<double> group(ops, layout, 100, s, 4);
    std::vector<std::vector<double>> g(4, std::vector<double>(100));
    std::vector<double*> pointers;
    for (size_t w = 0; w < 4; ++w) {
      for (size_t j = 0; j < 100; ++j) g[w][j] = 1.0 + static_cast<double>(w * 100 + j);  // never zero
      pointers.push_back(g[w].data());
    }
    std::vector<double> mean(100);
    const GroupResult r = group.average(pointers, 7, mean.data());
    int differing_pairs = 0;
    for (size_t w = 1; w < 4; ++w) {
      bool same = true;
      for (size_t j = 0; j < 100; ++j) same = same && ((g[w][j] != 0) == (g[0][j] != 0));
      differing_pairs += same ? 0 : 1;
    }
    int kept = 0;
    for (size_t j = 0; j < 100; ++j) kept += g[0][j] != 0;
    EXPECT_EQ(kept, 10);
    if (shared) {
      EXPECT_EQ(differing_pairs, 0);
      EXPECT_EQ(r.wire[0].collective, Collective::Allreduce);
      EXPECT_EQ(r.wire[0].bytes_per_worker, 40u);
    } else {
      EXPECT_GT(differing_pairs, 0);
      EXPECT_EQ(r.wire[0].collective, Collective::AllGather);
    }
  }
}

// fp16's largest finite value is 65504: two workers' 40000 overflow in an fp16 sum unless divided first.
TEST(CompressionGroup, Fp16SumOverflowsUnlessPredivided) {
  const std::vector<TensorLayout> layout = {{{"x", 0, 2, false}, 0, 0}};
  gpu::CpuOps<double> ops;
  for (const bool predivide : {false, true}) {
    CompressionSettings s = of(CompressorKind::Fp16);
    s.predivide = predivide;
    GroupCompressor<double> group(ops, layout, 2, s, 2);
    std::vector<double> a = {40000, 1}, b = {40000, 0}, mean(2);
    group.average({a.data(), b.data()}, 0, mean.data());
    if (predivide) {
      EXPECT_EQ(mean, (std::vector<double>{40000, 0.5}));
    } else {
      EXPECT_TRUE(std::isinf(mean[0]));
      EXPECT_EQ(mean[1], 0.5);
    }
  }
}

// In fp16 the values near 1 are 2^-10 apart. 1 + 2^-11 is a tie and rounds to even (1), so summing 1, 2^-11
// and 2^-11 in fp16 gives 1 at every addition, where a wide sum would give 1 + 2^-10 (representable).
TEST(CompressionGroup, Fp16SumIsRoundedAfterEveryAddition) {
  const std::vector<TensorLayout> layout = {{{"x", 0, 1, false}, 0, 0}};
  gpu::CpuOps<double> ops;
  GroupCompressor<double> group(ops, layout, 1, of(CompressorKind::Fp16), 3);
  std::vector<double> a = {1}, b = {std::ldexp(1, -11)}, c = {std::ldexp(1, -11)}, mean(1);
  group.average({a.data(), b.data(), c.data()}, 0, mean.data());
  EXPECT_EQ(mean[0], 1.0 * (1.0 / 3.0));
}

// Σ_t transmitted_t + e_T = Σ_t g_t for every worker, with steps before start_step and a filtered bias mixed in.
TEST(CompressionGroup, ErrorFeedbackIdentityHoldsForEveryCompressor) {
  gpu::CpuOps<double> ops;
  const int workers = 3, steps = 7;
  for (auto [name, s] : every_compressor()) {
    s.error_feedback = true;
    s.start_step = 2;
    s.min_tensor_size = 5;  // the bias goes uncompressed
    GroupCompressor<double> group(ops, kLayouts, kParams, s, workers);
    std::vector<Compressor<double>> alone;
    for (int w = 0; w < workers; ++w) alone.emplace_back(ops, kLayouts, kParams, s, w);
    std::vector<std::vector<double>> sum_g(workers, std::vector<double>(kParams, 0.0));
    auto sum_group = sum_g, sum_alone = sum_g;
    for (int64_t step = 0; step < steps; ++step) {
      std::vector<std::vector<double>> g, h;
      std::vector<double*> pointers;
      for (int w = 0; w < workers; ++w) {
        g.push_back(gradient<double>(w, step, 5));
        for (size_t j = 0; j < kParams; ++j) sum_g[w][j] += g[w][j];
        h.push_back(g[w]);
        alone[w].compress(h[w].data(), step);
      }
      for (auto& v : g) pointers.push_back(v.data());
      std::vector<double> mean(kParams);
      group.average(pointers, step, mean.data());
      for (int w = 0; w < workers; ++w)
        for (size_t j = 0; j < kParams; ++j) {
          sum_group[w][j] += g[w][j];
          sum_alone[w][j] += h[w][j];
        }
    }
    for (int w = 0; w < workers; ++w)
      for (size_t j = 0; j < kParams; ++j) {
        EXPECT_NEAR(sum_group[w][j] + group.residual(w)[j], sum_g[w][j], 1e-12 * (1 + std::fabs(sum_g[w][j])))
            << name << " group, worker " << w << " value " << j;
        EXPECT_NEAR(sum_alone[w][j] + alone[w].residual()[j], sum_g[w][j], 1e-12 * (1 + std::fabs(sum_g[w][j])))
            << name << " alone, worker " << w << " value " << j;
      }
  }
}

TEST(CompressionGroup, RelativeErrorIsMeasuredOnWhatEachWorkerTransmitted) {
  gpu::CpuOps<double> ops;
  for (auto [name, s] : every_compressor()) {
    GroupCompressor<double> group(ops, kLayouts, kParams, s, 2);
    std::vector<double> a = gradient<double>(0, 1), b = gradient<double>(1, 1), mean(kParams);
    const std::vector<double> a0 = a, b0 = b;
    const GroupResult r = group.average({a.data(), b.data()}, 1, mean.data());
    double in = 0, err = 0;
    for (size_t j = 0; j < kParams; ++j) in += b0[j] * b0[j], err += (b0[j] - b[j]) * (b0[j] - b[j]);
    EXPECT_NEAR(r.workers[1].relative_error(), std::sqrt(err / in), 1e-12) << name;
    EXPECT_EQ(r.workers[1].dense_bytes, 4 * kParams);
  }
}

TEST(CompressionGroup, SameSeedSameResultOtherSeedOtherResult) {
  gpu::CpuOps<double> ops;
  for (auto [name, s] : every_compressor()) {
    s.error_feedback = true;
    std::vector<double> results[3];
    for (int run = 0; run < 3; ++run) {
      s.seed = run < 2 ? 17 : 18;
      GroupCompressor<double> group(ops, kLayouts, kParams, s, 2);
      for (int64_t step = 0; step < 3; ++step) {
        std::vector<double> a = gradient<double>(0, step), b = gradient<double>(1, step), mean(kParams);
        group.average({a.data(), b.data()}, step, mean.data());
        results[run].insert(results[run].end(), mean.begin(), mean.end());
      }
    }
    EXPECT_EQ(results[0], results[1]) << name;
    const bool seeded = s.kind == CompressorKind::RandomK || s.kind == CompressorKind::Qsgd ||
                        s.kind == CompressorKind::PowerSgd;
    if (seeded) {
      EXPECT_NE(results[0], results[2]) << name;
    }
  }
}

TEST(CompressionGroup, WorkersThatDoNotContributeAreLeftOut) {
  gpu::CpuOps<double> ops;
  GroupCompressor<double> group(ops, kLayouts, kParams, of(CompressorKind::None), 3);
  std::vector<double> a = gradient<double>(0, 0), c = gradient<double>(2, 0), mean(kParams);
  const std::vector<double> a0 = a, c0 = c;
  group.contribute(2, c.data(), 0);
  group.contribute(0, a.data(), 0);
  const GroupResult r = group.combine(mean.data());
  EXPECT_EQ(r.ranks, (std::vector<int>{0, 2}));
  for (size_t j = 0; j < kParams; ++j) EXPECT_EQ(mean[j], (a0[j] + c0[j]) * 0.5);
}

TEST(CompressionGroup, ContractViolationsAreRejected) {
  gpu::CpuOps<double> ops;
  GroupCompressor<double> group(ops, kLayouts, kParams, of(CompressorKind::TopK), 2);
  std::vector<double> a(kParams, 1.0), b(kParams, 2.0), mean(kParams);
  EXPECT_THROW(group.combine(mean.data()), std::logic_error);
  EXPECT_THROW(group.contribute(2, a.data(), 0), std::invalid_argument);
  EXPECT_THROW(group.contribute(-1, a.data(), 0), std::invalid_argument);
  group.contribute(0, a.data(), 5);
  EXPECT_THROW(group.contribute(0, a.data(), 5), std::invalid_argument);  // twice
  EXPECT_THROW(group.contribute(1, b.data(), 6), std::invalid_argument);  // another step
  EXPECT_NO_THROW(group.contribute(1, b.data(), 5));
  EXPECT_NO_THROW(group.combine(mean.data()));
  std::vector<double> c(kParams, 3.0);
  EXPECT_THROW(group.average({a.data(), b.data(), c.data()}, 6, mean.data()), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::models
