// Wire bytes against encodings computed by hand, for every compressor and both index encodings, on a 10 × 20
// weight "w" (d = 200, ⌈log2 200⌉ = 8 index bits) and a 20-value bias "b" (⌈log2 20⌉ = 5 index bits). The
// dense fp32 vector is 4 · 220 = 880 bytes. Also: the layer filter and start_step send exactly the right tensors
// and steps uncompressed, at 4 bytes a value, unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/compression/compression.hpp"
#include "models/random.hpp"

namespace dtsim::models {
namespace {

using Vec = std::vector<double>;

const std::vector<TensorLayout> kLayouts = {{{"w", 0, 200, false}, 10, 20}, {{"b", 200, 20, true}, 0, 0}};

Vec gradient(uint64_t seed) {
  Rng rng(seed, "wire-test");
  Vec g(220);
  for (double& v : g) v = rng.normal() + 0.01;  // no exact zeros
  return g;
}

struct Expected {
  Collective collective;
  uint64_t w;
  uint64_t b;
};

// One worker alone, and a group of 3 (whose messages per worker are the same unless stated).
void expect_wire(const CompressionSettings& s, const Expected& e, const char* what) {
  gpu::CpuOps<double> ops;
  Compressor<double> c(ops, kLayouts, 220, s, 1);
  Vec g = gradient(1);
  const CompressionResult r = c.compress(g.data(), 0);
  ASSERT_EQ(r.wire.size(), 2u) << what;
  EXPECT_EQ(r.wire[0].tensor, 0u);
  EXPECT_EQ(r.wire[1].tensor, 1u);
  EXPECT_EQ(r.wire[0].collective, e.collective) << what;
  EXPECT_EQ(r.wire[0].bytes_per_worker, e.w) << what;
  EXPECT_EQ(r.wire[1].bytes_per_worker, e.b) << what;
  EXPECT_EQ(r.stats.wire_bytes, e.w + e.b) << what;
  EXPECT_EQ(r.stats.dense_bytes, 880u);
  EXPECT_DOUBLE_EQ(r.stats.compression_ratio(), 880.0 / static_cast<double>(e.w + e.b));
}

CompressionSettings of(CompressorKind kind) {
  CompressionSettings s;
  s.kind = kind;
  return s;
}

TEST(CompressionWire, Casts) {
  expect_wire(of(CompressorKind::None), {Collective::Allreduce, 4 * 200, 4 * 20}, "none");
  expect_wire(of(CompressorKind::Fp16), {Collective::Allreduce, 2 * 200, 2 * 20}, "fp16");
  expect_wire(of(CompressorKind::Bf16), {Collective::Allreduce, 2 * 200, 2 * 20}, "bf16");
}

TEST(CompressionWire, TopKWithBothIndexEncodings) {
  CompressionSettings s = of(CompressorKind::TopK);
  s.ratio = 0.05;  // k = round(10) = 10 of w, round(1) = 1 of b
  // bits: w 10 · (32 + 8) = 400 bits = 50 bytes; b 1 · (32 + 5) = 37 bits → 5 bytes.
  expect_wire(s, {Collective::AllGather, 50, 5}, "topk bits");
  s.indices = IndexEncoding::Int32;  // 8 bytes a value
  expect_wire(s, {Collective::AllGather, 80, 8}, "topk int32");
  s.ratio = 0.013;  // w: round(2.6) = 3 → 3 · 40 = 120 bits = 15 bytes; b: round(0.26) = 0 → at least 1
  s.indices = IndexEncoding::Bits;
  expect_wire(s, {Collective::AllGather, 15, 5}, "topk small k");
  s.ratio = 0.017;  // w: round(3.4) = 3 → 15; b: round(0.34) = 0 → at least 1 → 5
  expect_wire(s, {Collective::AllGather, 15, 5}, "topk rounding down");
  s.ratio = 0.035;  // w: round(7) = 7 → 7 · 40 = 280 bits = 35 bytes; b: round(0.7) = 1 → 5
  expect_wire(s, {Collective::AllGather, 35, 5}, "topk 7");
}

TEST(CompressionWire, RandomKSharedOrNot) {
  CompressionSettings s = of(CompressorKind::RandomK);
  s.ratio = 0.05;
  // Shared indices: the values alone, allreduced: 4 · 10 and 4 · 1.
  expect_wire(s, {Collective::Allreduce, 40, 4}, "randomk shared");
  s.shared_indices = false;
  expect_wire(s, {Collective::AllGather, 50, 5}, "randomk own indices, bits");
  s.indices = IndexEncoding::Int32;
  expect_wire(s, {Collective::AllGather, 80, 8}, "randomk own indices, int32");
}

TEST(CompressionWire, Qsgd) {
  CompressionSettings s = of(CompressorKind::Qsgd);
  s.qsgd_levels = 7;  // 1 sign + ⌈log2 8⌉ = 3 level bits = 4 bits
  // w: 4 (norm) + 200 · 4 / 8 = 104; b: 4 + 20 · 4 / 8 = 14.
  expect_wire(s, {Collective::AllGather, 104, 14}, "qsgd s=7");
  s.qsgd_bucket = 64;  // w: ⌈200/64⌉ = 4 norms = 16 + 100 = 116; b: one norm, 14
  expect_wire(s, {Collective::AllGather, 116, 14}, "qsgd s=7 bucket 64");
  s.qsgd_bucket = 0;
  s.qsgd_levels = 16;  // 1 + ⌈log2 17⌉ = 6 bits: w 4 + 1200/8 = 154; b 4 + 120/8 = 19
  expect_wire(s, {Collective::AllGather, 154, 19}, "qsgd s=16");
  s.qsgd_levels = 1;  // 1 + 1 = 2 bits: w 4 + 50 = 54; b 4 + 40 bits = 5 bytes → 9
  expect_wire(s, {Collective::AllGather, 54, 9}, "qsgd s=1");
  s.qsgd_levels = 2;  // 1 + ⌈log2 3⌉ = 3 bits: w 4 + 600/8 = 79; b 4 + 60 bits → 8 bytes = 12
  expect_wire(s, {Collective::AllGather, 79, 12}, "qsgd s=2");
}

TEST(CompressionWire, Signs) {
  // One bit a value: w 200/8 = 25 bytes; b 20 bits → 3 bytes. Scaled sign adds its 4-byte scale.
  expect_wire(of(CompressorKind::Sign), {Collective::AllGather, 25, 3}, "sign");
  expect_wire(of(CompressorKind::Signum), {Collective::AllGather, 25, 3}, "signum");
  expect_wire(of(CompressorKind::ScaledSign), {Collective::AllGather, 29, 7}, "scaled sign");
  CompressionSettings vote = of(CompressorKind::Sign);
  vote.majority_vote = true;
  expect_wire(vote, {Collective::AllGather, 25, 3}, "majority vote");
}

TEST(CompressionWire, PowerSgdAloneAndInAGroup) {
  // Alone: P̂ (10 × 2) and Q (20 × 2) at 4 bytes = 240; the bias goes uncompressed, 80.
  CompressionSettings s = of(CompressorKind::PowerSgd);
  s.powersgd_rank = 2;
  gpu::CpuOps<double> ops;
  Compressor<double> alone(ops, kLayouts, 220, s, 0);
  Vec g = gradient(2);
  const CompressionResult r = alone.compress(g.data(), 0);
  ASSERT_EQ(r.wire.size(), 2u);
  EXPECT_EQ(r.wire[0].collective, Collective::AllGather);
  EXPECT_EQ(r.wire[0].bytes_per_worker, 240u);
  EXPECT_EQ(r.wire[1].collective, Collective::Allreduce);
  EXPECT_EQ(r.wire[1].bytes_per_worker, 80u);
  // Group at rank 50 (clamped to 10): P 10 × 10 → 400 bytes, Q 20 × 10 → 800 bytes, bias 80.
  s.powersgd_rank = 50;
  GroupCompressor<double> group(ops, kLayouts, 220, s, 2);
  Vec g0 = gradient(3), g1 = gradient(4), mean(220);
  const GroupResult gr = group.average({g0.data(), g1.data()}, 0, mean.data());
  ASSERT_EQ(gr.wire.size(), 3u);
  EXPECT_EQ(gr.wire[0].bytes_per_worker, 400u);
  EXPECT_EQ(gr.wire[1].bytes_per_worker, 800u);
  EXPECT_EQ(gr.wire[2].bytes_per_worker, 80u);
  EXPECT_EQ(gr.wire[2].tensor, 1u);
  for (const CompressionStats& w : gr.workers) EXPECT_EQ(w.wire_bytes, 1280u);
}

TEST(CompressionWire, GroupMessagesMatchTheWorkersOwn) {
  CompressionSettings s = of(CompressorKind::TopK);
  s.ratio = 0.05;
  gpu::CpuOps<double> ops;
  GroupCompressor<double> group(ops, kLayouts, 220, s, 3);
  std::vector<Vec> g = {gradient(5), gradient(6), gradient(7)};
  Vec mean(220);
  const GroupResult r = group.average({g[0].data(), g[1].data(), g[2].data()}, 0, mean.data());
  ASSERT_EQ(r.wire.size(), 2u);
  EXPECT_EQ(r.wire[0].bytes_per_worker, 50u);
  EXPECT_EQ(r.wire[1].bytes_per_worker, 5u);
  EXPECT_EQ(r.ranks, (std::vector<int>{0, 1, 2}));
  ASSERT_EQ(r.workers.size(), 3u);
  for (const CompressionStats& w : r.workers) EXPECT_EQ(w.wire_bytes, 55u);
}

TEST(CompressionWire, LayerFilterLeavesSmallTensorsUncompressed) {
  CompressionSettings s = of(CompressorKind::TopK);
  s.ratio = 0.05;
  s.min_tensor_size = 21;  // the 20-value bias is below it
  s.error_feedback = true;
  gpu::CpuOps<double> ops;
  Compressor<double> c(ops, kLayouts, 220, s, 0);
  const Vec g = gradient(8);
  Vec y = g;
  const CompressionResult r = c.compress(y.data(), 0);
  EXPECT_EQ(r.wire[0].bytes_per_worker, 50u);
  EXPECT_EQ(r.wire[1].collective, Collective::Allreduce);
  EXPECT_EQ(r.wire[1].bytes_per_worker, 4u * 20);
  for (size_t i = 200; i < 220; ++i) {
    EXPECT_EQ(y[i], g[i]);
    EXPECT_EQ(c.residual()[i], 0.0);  // nothing withheld, nothing remembered
  }
}

TEST(CompressionWire, StartStepSendsEarlierStepsUncompressed) {
  for (const CompressorKind kind : {CompressorKind::TopK, CompressorKind::PowerSgd, CompressorKind::Signum}) {
    CompressionSettings s = of(kind);
    s.ratio = 0.05;
    s.start_step = 3;
    s.error_feedback = true;
    gpu::CpuOps<double> ops;
    GroupCompressor<double> group(ops, kLayouts, 220, s, 2);
    for (int64_t step = 0; step < 5; ++step) {
      Vec g0 = gradient(10 + step), g1 = gradient(20 + step), mean(220);
      const Vec before0 = g0;
      const GroupResult r = group.average({g0.data(), g1.data()}, step, mean.data());
      if (step < 3) {
        ASSERT_EQ(r.wire.size(), 2u);
        EXPECT_EQ(r.wire[0].collective, Collective::Allreduce);
        EXPECT_EQ(r.wire[0].bytes_per_worker, 800u);
        EXPECT_EQ(r.wire[1].bytes_per_worker, 80u);
        EXPECT_EQ(g0, before0);  // sent as is
        for (size_t i = 0; i < 220; ++i) EXPECT_EQ(group.residual(0)[i], 0.0);
      } else {
        EXPECT_LT(r.workers[0].wire_bytes, 880u) << to_string(kind);
      }
    }
  }
}

}  // namespace
}  // namespace dtsim::models
