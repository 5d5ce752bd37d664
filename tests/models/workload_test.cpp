// The workload generators against closed forms from the literature: Megatron-LM's FLOPs per iteration,
// Korthikanti et al.'s activation bytes per layer, Kaplan/PaLM's 6N + 12 L s d per token, LoRA's adapter sizes,
// and hand counts of small networks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "models/workload/resnet.hpp"
#include "models/workload/transformer.hpp"
#include "models/workload/workload.hpp"

namespace dtsim::models {
namespace {

Workload make(const TransformerSpec& spec) {
  Workload w;
  w.layers = transformer_layers(spec);
  w.family = "transformer";
  w.tokens_per_sample = spec.sequence;
  return w;
}

// A GPT-style block as Megatron-LM and Korthikanti et al. describe it: h, 4h feed-forward with GELU, biases,
// layer norms, dropout, learned positions, tied output.
TransformerSpec gpt(int layers, int hidden, int heads, int vocab, int sequence) {
  TransformerSpec s;
  s.layers = layers;
  s.hidden = hidden;
  s.heads = heads;
  s.ffn = 4 * hidden;
  s.vocab = vocab;
  s.sequence = sequence;
  s.max_positions = sequence;
  s.feed_forward = FeedForward::Gelu;
  s.norm = NormKind::LayerNorm;
  s.bias = true;
  s.final_norm = true;
  s.lm_head = true;
  s.tied_embeddings = true;
  s.dropout = true;
  return s;
}

// LLaMA-7B's shapes: SwiGLU, RMSNorm, no biases, rotary positions, untied output, no dropout.
TransformerSpec llama7b() {
  TransformerSpec s = gpt(32, 4096, 32, 32000, 2048);
  s.feed_forward = FeedForward::SwiGlu;
  s.ffn = 11008;
  s.bias = false;
  s.max_positions = 0;
  s.tied_embeddings = false;
  s.norm = NormKind::RmsNorm;
  s.dropout = false;
  return s;
}

TEST(TransformerWorkload, FlopsMatchMegatronsPerIterationFormula) {
  // Narayanan et al., SC'21 (arXiv:2104.04473), section 5.1 without recomputation:
  // F = 72 B s l h^2 (1 + s / (6 h) + V / (12 h l)) per iteration of B sequences; here B = 1.
  for (const auto& [l, h, a, v, s] : std::vector<std::tuple<int, int, int, int, int>>{
           {48, 1600, 25, 50257, 1024}, {2, 64, 4, 1000, 128}, {24, 2048, 16, 51200, 2048}}) {
    const Workload w = make(gpt(l, h, a, v, s));
    const double expected = 72.0 * s * l * double(h) * h * (1 + s / (6.0 * h) + v / (12.0 * h * l));
    EXPECT_NEAR(w.training_flops() / expected, 1.0, 1e-12) << "l=" << l << " h=" << h;
    EXPECT_NEAR(w.backward_flops() / w.forward_flops(), 2.0, 1e-12);
  }
}

TEST(TransformerWorkload, TrainingFlopsPerTokenAreSixNPlusAttention) {
  // Kaplan et al. 2020 (arXiv:2001.08361) Table 1 and PaLM (arXiv:2204.02311) appendix B: 6 N + 12 l s d per
  // token for training, N the weights used in matrix products. The input embedding is a lookup and the
  // norms and biases are element-wise, so they are the only parameters outside N.
  TransformerSpec s = llama7b();
  const Workload w = make(s);
  const double matmul_weights = 32.0 * (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008) + 4096.0 * 32000;
  const double per_token = 6 * matmul_weights + 12.0 * 32 * 2048 * 4096;
  EXPECT_NEAR(w.training_flops() / 2048 / per_token, 1.0, 1e-12);
  // And 6 N over all parameters is within a few per cent of it (the attention term, minus the embedding).
  EXPECT_NEAR(w.training_flops() / 2048 / (6.0 * w.parameters()), 1.06, 0.02);
}

TEST(TransformerWorkload, ActivationsMatchKorthikantisPerLayerBytes) {
  // Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models" (arXiv:2205.05198),
  // equation 1: s b h (34 + 5 a s / h) bytes per layer with 16-bit activations and dropout; b = 1 here.
  const int l = 4, h = 256, a = 8, s = 512;
  const Workload w = make(gpt(l, h, a, 1000, s));
  double block0 = 0;
  for (const auto& layer : w.layers)
    if (layer.block == 0) block0 += layer.saved_bytes(2);
  EXPECT_DOUBLE_EQ(block0, double(s) * h * (34 + 5.0 * a * s / h));
  // Full recomputation keeps 2 s b h per layer plus one layer's worth (section 5 of the same paper).
  double outside = 0;
  for (const auto& layer : w.layers)
    if (layer.block < 0) outside += layer.saved_bytes(2);
  EXPECT_DOUBLE_EQ(w.saved_bytes(2, true), outside + l * 2.0 * s * h + block0);
  EXPECT_DOUBLE_EQ(w.saved_bytes(2, false), outside + l * block0);
  EXPECT_DOUBLE_EQ(w.recompute_flops(), w.forward_flops() - 2.0 * s * h * 1000);  // all but the head
}

TEST(TransformerWorkload, FlashAttentionKeepsNoScores) {
  TransformerSpec s = gpt(2, 256, 8, 1000, 512);
  s.dropout = false;
  const Workload plain = make(s);
  s.flash_attention = true;
  const Workload flash = make(s);
  // Without dropout a plain layer keeps 34 - 2 (masks) s h and 4 a s^2 bytes for the softmax output; flash
  // keeps none of the s^2 terms, only fp32 statistics per head and token.
  const auto block0 = [](const Workload& w) {
    double b = 0;
    for (const auto& layer : w.layers)
      if (layer.block == 0) b += layer.saved_bytes(2);
    return b;
  };
  EXPECT_DOUBLE_EQ(block0(plain), 512.0 * 256 * 32 + 2.0 * 8 * 512 * 512);
  EXPECT_DOUBLE_EQ(block0(flash), 512.0 * 256 * 32 + 4.0 * 8 * 512);
  // The backward pass computes Q K^T once more: + 2 s^2 d per layer.
  EXPECT_DOUBLE_EQ(flash.backward_flops() - plain.backward_flops(), 2 * 2.0 * 512 * 512 * 256);
}

TEST(TransformerWorkload, LoraTrainsOnlyAdaptersOfRankTimesInPlusOut) {
  TransformerSpec s = llama7b();
  const Workload full = make(s);
  s.lora = {8, 16, {"q", "v"}};
  const Workload lora = make(s);
  // r (d_in + d_out) per adapted matrix: 32 layers x 2 matrices x 8 x (4096 + 4096) = 4,194,304, the count
  // Hugging Face PEFT prints for LLaMA-7B with r = 8 on q_proj and v_proj.
  EXPECT_EQ(lora.trainable(), 4194304u);
  EXPECT_EQ(lora.parameters(), full.parameters() + 4194304u);
  // Frozen weights skip their weight gradient: the backward pass is the forward pass once (input gradients),
  // plus the adapters' own work; the attention products still cost 2 x.
  const double s_tokens = 2048, adapters = 4194304;
  const double attention = 32 * 4.0 * s_tokens * s_tokens * 4096;
  const double base_forward = full.forward_flops();
  EXPECT_NEAR(lora.forward_flops(), base_forward + 2 * s_tokens * adapters, 1);
  EXPECT_NEAR(lora.backward_flops(), (base_forward - attention) + 2 * attention + 4 * s_tokens * adapters, 1);
  // Gradients become ready only for the adapted projections, last block first.
  const auto order = lora.gradient_ready_order();
  ASSERT_EQ(order.size(), 32u);
  EXPECT_EQ(lora.layers[order.front()].name, "block31.attention.qkv");
  EXPECT_EQ(lora.layers[order.back()].name, "block0.attention.qkv");
}

TEST(TransformerWorkload, GroupedQueryAttentionNarrowsKeysAndValues) {
  TransformerSpec s = gpt(1, 1024, 16, 100, 64);
  s.bias = false;
  s.kv_heads = 4;  // 4 key/value heads of 64: k and v are 1024 -> 256
  const Workload w = make(s);
  const auto qkv = std::find_if(w.layers.begin(), w.layers.end(),
                                [](const LayerCost& l) { return l.name == "block0.attention.qkv"; });
  ASSERT_NE(qkv, w.layers.end());
  EXPECT_EQ(qkv->parameters, 1024u * (1024 + 256 + 256));
}

TEST(TransformerWorkload, RefusesShapesThatCannotBeBuilt) {
  TransformerSpec s = gpt(2, 100, 3, 10, 8);  // 3 heads do not divide 100
  EXPECT_THROW(transformer_layers(s), std::invalid_argument);
  s = gpt(2, 96, 3, 10, 8);
  s.kv_heads = 2;
  EXPECT_THROW(transformer_layers(s), std::invalid_argument);
  s = gpt(2, 96, 3, 10, 8);
  s.lora = {4, 8, {"qq"}};
  try {
    transformer_layers(s);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("lora.targets has 'qq'"), std::string::npos) << e.what();
  }
  s = gpt(2, 96, 3, 10, 16);
  s.max_positions = 8;
  EXPECT_THROW(transformer_layers(s), std::invalid_argument);
}

TEST(ResNetWorkload, OneBlockByHand) {
  // A 32 x 32 RGB image, stem of 8 channels, one stage of one bottleneck of width 4 (out 16), 10 classes.
  ResNetSpec spec;
  spec.image = 32;
  spec.stem_width = 8;
  spec.stages = {{1, 4, 1}};
  spec.classes = 10;
  Workload w;
  w.layers = resnet_layers(spec);
  // Stem: 7x7x3x8 = 1176 weights; 32 -> 16 by the conv, 16 -> 8 by the pool.
  // Block: 1x1 8->4 (32), 3x3 4->4 (144), 1x1 4->16 (64), shortcut 1x1 8->16 (128); four BNs of 2C: 8+8+32+32;
  // stem BN 16; fc 16x10+10.
  EXPECT_EQ(w.parameters(), 1176u + 32 + 144 + 64 + 128 + 8 + 8 + 32 + 32 + 16 + 170);
  const double hw_stem = 16 * 16, hw = 8 * 8;
  const double macs = 1176 * hw_stem + (32 + 144 + 64 + 128) * hw + 160;
  EXPECT_DOUBLE_EQ(w.forward_flops(), 2 * macs);
  EXPECT_DOUBLE_EQ(w.backward_flops(), 4 * macs);
  EXPECT_EQ(w.layers.front().name, "stem.conv");
  EXPECT_EQ(w.layers[w.gradient_ready_order().front()].name, "fc");
}

}  // namespace
}  // namespace dtsim::models
