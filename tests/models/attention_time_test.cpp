// Fused attention time from a measured table: the cited figures' points, interpolation and the derived backward
// rate in closed form, wave quantisation against the benchmark's call, and the table reader's refusals.
#include "models/workload/attention_time.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "models/workload/compute_time.hpp"
#include "models/workload/transformer.hpp"

namespace dtsim::models {
namespace {

AttentionTable shipped(const std::string& name) {
  std::ifstream in(std::string(DTSIM_GPU_PROFILE_DIR) + "/attention/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return parse_attention_table(text.str());
}

constexpr double T = 1e12;

// The benchmark's call at sequence s: 16384 tokens, heads × width = 2048.
AttentionShape benchmark_shape(double head_dim, double sequence, bool causal) {
  return {2048 / head_dim, head_dim, sequence, causal};
}
double benchmark_batch(double sequence) { return 16384 / sequence; }

TEST(AttentionTime, TheBenchmarksOwnCallTakesTheFiguresTimes) {
  const AttentionTable h100 = shipped("h100-80gb-flash2.csv");
  // FlashAttention-3 paper, Figure 5(c): FlashAttention-2 forward, head width 128, no mask, 2k: 362 TFLOP/s;
  // FlashAttention-2's H100 figure (b), forward + backward at 2k: 320 TFLOP/s.
  const AttentionShape shape = benchmark_shape(128, 2048, false);
  const double batch = benchmark_batch(2048), flops = 4 * batch * 2048.0 * 2048 * 2048;  // heads × width = 2048
  EXPECT_DOUBLE_EQ(shape.forward_flops(batch), flops);
  const AttentionTime t = attention_time(shape, batch, h100, 132);
  EXPECT_DOUBLE_EQ(t.waves_factor, 1.0);  // the same 2,048 query blocks as the benchmark
  EXPECT_NEAR(t.forward, flops / (362 * T), 1e-15);
  EXPECT_NEAR(t.forward + t.backward, 3.5 * flops / (320 * T), 1e-15);

  // A100, figure (d): causal, head width 128, 4k: 173 TFLOP/s forward + backward, the causal mask halving the FLOPs.
  const AttentionTable a100 = shipped("a100-80gb-flash2.csv");
  const AttentionShape causal = benchmark_shape(128, 4096, true);
  const double causal_flops = 4 * benchmark_batch(4096) * 4096.0 * 4096 * 2048 / 2;
  const AttentionTime c = attention_time(causal, benchmark_batch(4096), a100, 108);
  EXPECT_DOUBLE_EQ(c.waves_factor, 1.0);
  EXPECT_NEAR(c.forward + c.backward, 3.5 * causal_flops / (173 * T), 1e-15);
  // No forward points on the A100: both directions run at the pair's rate.
  EXPECT_NEAR(c.forward, causal_flops / (173 * T), 1e-15);
}

TEST(AttentionTime, TheBackwardRateIsWhatThePairLeavesAfterTheForward) {
  const AttentionTable h100 = shipped("h100-80gb-flash2.csv");
  // Causal, width 128, 2k: forward 298, forward + backward 265 → 2.5 / (3.5/265 − 1/298) ≈ 253.8 TFLOP/s.
  EXPECT_NEAR(h100.backward_rate(128, 2048, true), 2.5 / (3.5 / (265 * T) - 1 / (298 * T)), 1e-9 * T);
  EXPECT_NEAR(h100.backward_rate(128, 2048, true) / T, 253.76, 0.01);
  EXPECT_DOUBLE_EQ(h100.forward_rate(128, 2048, true), 298 * T);
}

TEST(AttentionTime, RatesAreInterpolatedInLogSequenceThenInHeadWidth) {
  const AttentionTable h100 = shipped("h100-80gb-flash2.csv");
  // Halfway between 1k and 2k in log2: the mean of 350 and 362.
  EXPECT_NEAR(h100.forward_rate(128, 1024 * std::sqrt(2.0), false), 356 * T, 1e-9 * T);
  // Width 96, halfway between 64 (306 at 1k) and 128 (350): 328.
  EXPECT_NEAR(h100.forward_rate(96, 1024, false), 328 * T, 1e-9 * T);
  // Held at the ends: below 512, above 16k, below width 64.
  EXPECT_DOUBLE_EQ(h100.forward_rate(128, 128, false), 309 * T);
  EXPECT_DOUBLE_EQ(h100.forward_rate(128, 65536, false), 370 * T);
  EXPECT_DOUBLE_EQ(h100.forward_rate(32, 1024, false), 306 * T);
  // Width 256 has forward points only: its backward is width 128's.
  EXPECT_DOUBLE_EQ(h100.backward_rate(256, 4096, false), h100.backward_rate(128, 4096, false));
  EXPECT_DOUBLE_EQ(h100.forward_rate(256, 4096, false), 323 * T);
}

TEST(AttentionTime, ACallWithFewerQueryBlocksThanSMsPaysForItsIdleSMs) {
  const AttentionTable h100 = shipped("h100-80gb-flash2.csv");
  // One sequence of 1,024 tokens, 8 heads of 128: 8 × 8 = 64 query blocks on 132 SMs, one wave that is 64/132
  // full (quantisation 132/64), against the benchmark's 2,048 blocks in 16 waves (16 × 132 / 2048 = 1.03125).
  const AttentionShape shape{8, 128, 1024, false};
  const AttentionTime t = attention_time(shape, 1, h100, 132);
  EXPECT_DOUBLE_EQ(t.waves_factor, (132.0 / 64) / (16 * 132.0 / 2048));
  EXPECT_DOUBLE_EQ(t.waves_factor, 2.0);
  EXPECT_NEAR(t.forward, shape.forward_flops(1) / (350 * T) * 2, 1e-18);
  // Without an SM count, no correction.
  EXPECT_DOUBLE_EQ(attention_time(shape, 1, h100, 0).waves_factor, 1.0);
}

// One block of `hidden` wide, `heads` heads, over `sequence` tokens.
TransformerSpec one_block(int hidden, int heads, int sequence) {
  TransformerSpec spec;
  spec.layers = 1;
  spec.hidden = hidden;
  spec.heads = heads;
  spec.ffn = 4 * hidden;
  spec.vocab = 1000;
  spec.sequence = sequence;
  return spec;
}

TEST(AttentionTime, AFlashAttentionLayerIsTimedFromTheTableUnderTheTileModel) {
  TransformerSpec spec = one_block(4096, 32, 2048);  // LLaMA-7B's attention
  spec.flash_attention = true;
  spec.causal = true;
  const std::vector<LayerCost> layers = transformer_layers(spec);
  const LayerCost* attention = nullptr;
  for (const LayerCost& l : layers)
    if (l.kind == "attention") attention = &l;
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(attention->fused_attention.heads, 32);
  EXPECT_EQ(attention->fused_attention.head_dim, 128);
  EXPECT_EQ(attention->fused_attention.sequence, 2048);
  EXPECT_TRUE(attention->fused_attention.causal);

  DeviceRates d;
  d.matmul_flops = 400 * T;
  d.launch_overhead = 5e-6;  // no memory bandwidth: the compute side alone, plus launches
  d.matmul.multiprocessors = 132;
  d.matmul.large_product_flops = 794.5 * T;
  d.matmul.attention = std::make_shared<const AttentionTable>(shipped("h100-80gb-flash2.csv"));
  const AttentionTime t = attention_time(attention->fused_attention, 4, *d.matmul.attention, 132);
  EXPECT_DOUBLE_EQ(layer_forward_seconds(*attention, 4, 2, d), t.forward + 1 * 5e-6);
  EXPECT_DOUBLE_EQ(layer_backward_seconds(*attention, 4, 2, d), t.backward + 2 * 5e-6);
  // Causal, width 128, 2k, 4 sequences × 32 heads × 16 blocks = 2,048 blocks, the benchmark's: 298 TFLOP/s.
  EXPECT_NEAR(t.forward, 4 * 4.0 * 2048 * 2048 * 4096 / 2 / (298 * T), 1e-15);
  // Without a table the layer's FLOPs run at the achievable rate, as before.
  d.matmul.attention = nullptr;
  EXPECT_DOUBLE_EQ(layer_forward_seconds(*attention, 4, 2, d), 4 * attention->forward_flops / (794.5 * T) + 5e-6);
  // Without the mask, the shape says so.
  spec.causal = false;
  for (const LayerCost& l : transformer_layers(spec)) {
    if (l.kind == "attention") {
      EXPECT_FALSE(l.fused_attention.causal);
    }
  }
}

TEST(AttentionTime, UnfusedAttentionHasNoFusedShape) {
  for (const LayerCost& l : transformer_layers(one_block(256, 4, 64))) EXPECT_FALSE(l.fused_attention.present()) << l.name;
}

int error_line(const std::string& text) {
  try {
    parse_attention_table(text);
  } catch (const AttentionTableError& e) {
    return e.line;
  }
  return -1;
}

const std::string kBothMasks = "forward+backward,no,64,512,100\nforward+backward,yes,64,512,80\n";

TEST(AttentionTableReader, ReadsCommentsAHeaderAndBlankLines) {
  const AttentionTable t = parse_attention_table("# a source\npass,causal,head_dim,sequence,tflops\n\n" + kBothMasks +
                                                 "forward,no,64,512,150 # a trailing comment\n");
  EXPECT_EQ(t.points(), 3u);
  EXPECT_DOUBLE_EQ(t.forward_rate(64, 512, false), 150 * T);
  EXPECT_DOUBLE_EQ(t.forward_rate(64, 512, true), 80 * T);
}

TEST(AttentionTableReader, RefusesEachBadLineByItsNumber) {
  EXPECT_EQ(error_line(kBothMasks + "forward,no,64\n"), 3);                  // too few fields
  EXPECT_EQ(error_line(kBothMasks + "backward,no,64,512,100\n"), 3);         // no such pass
  EXPECT_EQ(error_line(kBothMasks + "forward,maybe,64,512,100\n"), 3);       // causal is yes or no
  EXPECT_EQ(error_line(kBothMasks + "forward,no,64.5,512,100\n"), 3);        // a head width is whole
  EXPECT_EQ(error_line(kBothMasks + "forward,no,64,512,fast\n"), 3);         // not a number
  EXPECT_EQ(error_line(kBothMasks + "forward,no,64,-512,100\n"), 3);         // not positive
  EXPECT_EQ(error_line(kBothMasks + "forward,no,64,512,1e999\n"), 3);        // not finite
  EXPECT_EQ(error_line("forward+backward,no,64,512,100\npass,causal,head_dim,sequence,tflops\n"), 2);  // late header
  // Problems of the whole table have no line.
  EXPECT_EQ(error_line(kBothMasks + "forward+backward,no,64,512,90\n"), 0);  // a point given twice
  EXPECT_EQ(error_line("forward+backward,no,64,512,100\n"), 0);              // no causal rate
  EXPECT_EQ(error_line(kBothMasks + "forward,no,64,512,20\n"), 0);           // forward leaves backward no time
  EXPECT_EQ(error_line(kBothMasks), -1);
}

TEST(AttentionTableReader, EveryShippedTableReads) {
  EXPECT_EQ(shipped("a100-80gb-flash2.csv").points(), 24u);  // 4 panels × 6 lengths
  EXPECT_EQ(shipped("h100-80gb-flash2.csv").points(), 60u);  // 4 forward + backward panels and 6 forward ones
}

}  // namespace
}  // namespace dtsim::models
