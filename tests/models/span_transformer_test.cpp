// The span transformer against finite differences (every base tensor, every adapter), closed-form parameter and
// FLOP counts, the masks' effect on what each position can see, and LoRA's merge and initialisation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/random.hpp"
#include "models/transformer/span_transformer.hpp"

namespace dtsim::models {
namespace {

using Model = SpanTransformer<double>;

TransformerConfig tiny(bool causal) {
  TransformerConfig c;
  c.vocab = 11;
  c.seq_len = 6;
  c.dim = 8;
  c.heads = 2;
  c.layers = 2;
  c.ffn = 12;
  c.causal = causal;
  return c;
}

// Three sequences, two of them padded, with answers inside their valid tokens.
struct Fixture {
  std::vector<int32_t> tokens, lengths{6, 4, 5}, starts{1, 0, 2}, ends{3, 2, 4};
  explicit Fixture(const TransformerConfig& c, uint64_t seed = 3) {
    Rng rng(seed, "test-tokens");
    for (int i = 0; i < 3 * c.seq_len; ++i) tokens.push_back(static_cast<int32_t>(rng.below(c.vocab)));
  }
  SpanBatch batch() const { return {3, tokens.data(), lengths.data(), starts.data(), ends.data()}; }
};

std::vector<double> random_vector(size_t n, uint64_t seed, double scale) {
  Rng rng(seed, "test-values");
  std::vector<double> v(n);
  for (double& x : v) x = scale * rng.normal();
  return v;
}

// The base with every tensor perturbed, so that no gradient is zero by symmetry (unit gains, zero biases).
std::vector<double> perturbed_base(const Model& m, uint64_t seed) {
  std::vector<double> base(m.base_param_count());
  m.init_base(base.data(), seed);
  const std::vector<double> noise = random_vector(base.size(), seed + 1, 0.3);
  for (size_t i = 0; i < base.size(); ++i) base[i] += noise[i];
  return base;
}

double loss_at(const Model& m, gpu::CpuOps<double>& ops, const std::vector<double>& base,
               const std::vector<double>& adapters, const SpanBatch& batch) {
  auto ws = m.make_workspace(ops, batch.batch);
  std::vector<SpanPrediction> predictions;
  return m.evaluate(ops, ws, base.data(), adapters.empty() ? nullptr : adapters.data(), batch, predictions).loss;
}

// Central differences of the mean loss against the analytic gradient of `trained` (base or adapters).
void expect_gradient_matches(const Model& m, std::vector<double> base, std::vector<double> adapters,
                             const SpanBatch& batch) {
  gpu::CpuOps<double> ops;
  const bool lora = m.lora().enabled();
  std::vector<double>& trained = lora ? adapters : base;
  std::vector<double> grads(trained.size());
  auto ws = m.make_workspace(ops, batch.batch);
  m.loss_and_gradient(ops, ws, base.data(), lora ? adapters.data() : nullptr, batch, grads.data());
  const double h = 1e-6;
  double diff = 0.0, norm = 0.0;
  std::vector<double> numeric(trained.size());
  for (size_t i = 0; i < trained.size(); ++i) {
    const double saved = trained[i];
    trained[i] = saved + h;
    const double up = loss_at(m, ops, base, adapters, batch);
    trained[i] = saved - h;
    const double down = loss_at(m, ops, base, adapters, batch);
    trained[i] = saved;
    numeric[i] = (up - down) / (2 * h) / batch.batch;  // evaluate() sums, the gradient is of the mean
    diff += (numeric[i] - grads[i]) * (numeric[i] - grads[i]);
    norm += numeric[i] * numeric[i];
  }
  ASSERT_GT(norm, 0.0);
  EXPECT_LT(std::sqrt(diff / norm), 1e-6);
  // Tensor by tensor too, so a failure names the tensor. Some gradients are zero exactly (a key bias, the final
  // shift and the head's bias add the same value at every position, which the softmaxes ignore), so each tensor's
  // error is measured against its own norm or a thousandth of the whole gradient's, whichever is larger.
  const auto& tensors = lora ? m.adapter_tensors() : m.base_tensors();
  for (const ParamTensor& t : tensors) {
    double td = 0.0, tn = 0.0;
    for (size_t i = t.offset; i < t.offset + t.size; ++i) {
      td += (numeric[i] - grads[i]) * (numeric[i] - grads[i]);
      tn += numeric[i] * numeric[i];
    }
    EXPECT_LT(std::sqrt(td / std::max(tn, 1e-6 * norm)), 1e-5) << t.name;
  }
}

TEST(SpanTransformer, EncoderGradientMatchesFiniteDifferences) {
  const Model m(tiny(false), {});
  const Fixture f(m.config());
  expect_gradient_matches(m, perturbed_base(m, 5), {}, f.batch());
}

TEST(SpanTransformer, DecoderGradientMatchesFiniteDifferences) {
  const Model m(tiny(true), {});
  const Fixture f(m.config());
  expect_gradient_matches(m, perturbed_base(m, 6), {}, f.batch());
}

TransformerConfig tiny_rotary(bool causal) {
  TransformerConfig c = tiny(causal);
  c.positions = PositionEncoding::Rotary;
  c.rotary_base = 20.0;  // a small base turns every pair noticeably over six positions
  return c;
}

TEST(SpanTransformer, RotaryEncoderAndDecoderGradientsMatchFiniteDifferences) {
  for (bool causal : {false, true}) {
    const Model m(tiny_rotary(causal), {});
    const Fixture f(m.config());
    expect_gradient_matches(m, perturbed_base(m, 15), {}, f.batch());
  }
}

LoraConfig every_projection(int rank) {
  LoraConfig l;
  l.rank = rank;
  l.alpha = 3.0;
  l.q = l.k = l.v = l.o = l.mlp = true;
  return l;
}

TEST(SpanTransformer, LoraGradientMatchesFiniteDifferences) {
  for (bool causal : {false, true}) {
    const Model m(tiny(causal), every_projection(2));
    const Fixture f(m.config());
    // Non-zero B so that A's gradient is not zero (it is at LoRA's initialisation).
    expect_gradient_matches(m, perturbed_base(m, 7), random_vector(m.adapter_param_count(), 8, 0.3), f.batch());
  }
}

TEST(SpanTransformer, RotaryLoraGradientMatchesFiniteDifferences) {
  const Model m(tiny_rotary(false), every_projection(2));
  const Fixture f(m.config());
  expect_gradient_matches(m, perturbed_base(m, 16), random_vector(m.adapter_param_count(), 17, 0.3), f.batch());
}

TEST(SpanTransformer, RotaryModelHasNoPositionTableButSeesOrder) {
  const Model learned(tiny(false), {}), rotary(tiny_rotary(false), {});
  const size_t S = 6, d = 8;
  EXPECT_EQ(learned.base_param_count() - rotary.base_param_count(), S * d);
  for (const ParamTensor& t : rotary.base_tensors()) EXPECT_NE(t.name, "wpe");
  // Without any position information self-attention is permutation-equivariant: reversing a sequence would reverse
  // its logits. Rotary embeddings break that symmetry.
  gpu::CpuOps<double> ops;
  const std::vector<double> base = perturbed_base(rotary, 18);
  std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6}, reversed = {6, 5, 4, 3, 2, 1}, lengths = {6};
  auto logits = [&](const std::vector<int32_t>& t) {
    auto ws = rotary.make_workspace(ops, 1);
    std::vector<SpanPrediction> p;
    rotary.evaluate(ops, ws, base.data(), nullptr, {1, t.data(), lengths.data(), nullptr, nullptr}, p);
    return rotary.last_logits(ops, ws);
  };
  const auto forward = logits(tokens), backward = logits(reversed);
  double largest = 0;
  for (size_t i = 0; i < S; ++i) largest = std::max(largest, std::abs(forward[i] - backward[S - 1 - i]));
  EXPECT_GT(largest, 1e-3);
}

TEST(SpanTransformer, RotaryFlopsReplaceThePositionAddWithTwoRotationsPerBlock) {
  TransformerConfig c;
  c.vocab = 100, c.seq_len = 16, c.dim = 64, c.heads = 4, c.layers = 3, c.ffn = 128;
  TransformerConfig r = c;
  r.positions = PositionEncoding::Rotary;
  const double S = 16, d = 64, L = 3;
  for (const LoraConfig& lora : {LoraConfig{}, every_projection(4)}) {
    const Model learned(c, lora), rotary(r, lora);
    // Forward: the position add (d per token) becomes a rotation of q and k per block (6 FLOPs per pair, d pairs).
    EXPECT_DOUBLE_EQ(rotary.forward_flops() - learned.forward_flops(), S * (6 * d * L - d));
    // Backward: dq and dk turned back in every block; the position table's gradient (d per token) only when the
    // base trains.
    const double table = lora.enabled() ? 0.0 : d;
    EXPECT_DOUBLE_EQ(rotary.backward_flops() - learned.backward_flops(), S * (6 * d * L - table));
  }
}

TEST(SpanTransformer, ParameterCountsFollowTheirClosedForm) {
  TransformerConfig c;
  c.vocab = 300, c.seq_len = 64, c.dim = 128, c.heads = 4, c.layers = 4, c.ffn = 512;
  const size_t V = 300, S = 64, d = 128, f = 512, L = 4;
  const size_t block = 2 * d + 4 * (d * d + d) + 2 * d + (d * f + f) + (f * d + d);
  const Model full(c, {});
  EXPECT_EQ(full.base_param_count(), V * d + S * d + L * block + 2 * d + 2 * d + 2);
  EXPECT_EQ(full.trained_param_count(), full.base_param_count());
  // The projection weights: six per block, d×d for the attention's four, d×f and f×d for the MLP's.
  const std::vector<ParamTensor> projections = full.projection_weights();
  ASSERT_EQ(projections.size(), 6 * L);
  const std::vector<std::string> names = {"q", "k", "v", "o", "mlp1", "mlp2"};
  for (size_t i = 0; i < projections.size(); ++i) {
    EXPECT_EQ(projections[i].name, "block" + std::to_string(i / 6) + "." + names[i % 6] + ".weight");
    EXPECT_EQ(projections[i].size, i % 6 < 4 ? d * d : d * f);
  }
  LoraConfig lora;
  lora.rank = 8;
  const Model adapted(c, lora);  // q and v
  EXPECT_EQ(adapted.adapter_param_count(), L * 2 * (d * 8 + 8 * d));
  EXPECT_EQ(adapted.trained_param_count(), adapted.adapter_param_count());
  // What travels under LoRA is a small fraction of the model: 2.0 % here.
  EXPECT_LT(static_cast<double>(adapted.adapter_param_count()) / adapted.base_param_count(), 0.05);
}

TEST(SpanTransformer, LoraStartsAsTheBaseModelAndMergesExactly) {
  gpu::CpuOps<double> ops;
  const Model plain(tiny(false), {});
  const Model m(tiny(false), every_projection(3));
  const Fixture f(m.config());
  const std::vector<double> base = perturbed_base(m, 9);
  std::vector<double> adapters(m.adapter_param_count());
  m.init_adapters(adapters.data(), 10);
  auto ws = m.make_workspace(ops, 3);
  std::vector<SpanPrediction> p;
  m.evaluate(ops, ws, base.data(), adapters.data(), f.batch(), p);
  const std::vector<double> at_init = m.last_logits(ops, ws);
  auto ws_plain = plain.make_workspace(ops, 3);
  plain.evaluate(ops, ws_plain, base.data(), nullptr, f.batch(), p);
  const std::vector<double> base_logits = plain.last_logits(ops, ws_plain);
  for (size_t i = 0; i < at_init.size(); ++i) EXPECT_EQ(at_init[i], base_logits[i]) << i;  // B = 0: nothing added

  // Trained adapters change the logits; merged into the base they give the same logits without adapters.
  adapters = random_vector(m.adapter_param_count(), 11, 0.3);
  m.evaluate(ops, ws, base.data(), adapters.data(), f.batch(), p);
  const std::vector<double> adapted = m.last_logits(ops, ws);
  std::vector<double> merged(base.size());
  m.merge(base.data(), adapters.data(), merged.data());
  plain.evaluate(ops, ws_plain, merged.data(), nullptr, f.batch(), p);
  const std::vector<double> merged_logits = plain.last_logits(ops, ws_plain);
  double moved = 0.0;
  for (size_t i = 0; i < adapted.size(); ++i) {
    EXPECT_NEAR(adapted[i], merged_logits[i], 1e-10) << i;
    moved = std::max(moved, std::abs(adapted[i] - base_logits[i]));
  }
  EXPECT_GT(moved, 1e-3);
}

// Logits at the valid positions of sequence `b` after replacing token `position` of it.
std::vector<double> logits_after_change(const Model& m, const std::vector<double>& base, Fixture f, int b,
                                        int position) {
  gpu::CpuOps<double> ops;
  if (position >= 0) {
    int32_t& token = f.tokens[b * m.config().seq_len + position];
    token = (token + 1) % m.config().vocab;
  }
  auto ws = m.make_workspace(ops, 3);
  std::vector<SpanPrediction> p;
  m.evaluate(ops, ws, base.data(), nullptr, f.batch(), p);
  return m.last_logits(ops, ws);
}

TEST(SpanTransformer, PaddedTokensAreInvisible) {
  const Model m(tiny(false), {});
  const std::vector<double> base = perturbed_base(m, 12);
  const Fixture f(m.config());
  const auto before = logits_after_change(m, base, f, 1, -1);
  const auto after = logits_after_change(m, base, f, 1, 5);  // sequence 1 has 4 valid tokens
  const int S = m.config().seq_len;
  for (int which = 0; which < 2; ++which) {
    for (int i = 0; i < 4; ++i) EXPECT_EQ(before[(2 + which) * S + i], after[(2 + which) * S + i]) << i;
  }
  // A valid token does change what the others see (the test can fail).
  const auto changed = logits_after_change(m, base, f, 1, 2);
  EXPECT_NE(before[2 * S + 0], changed[2 * S + 0]);
}

TEST(SpanTransformer, DecoderPositionsSeeOnlyTheirPast) {
  const Model m(tiny(true), {});
  const std::vector<double> base = perturbed_base(m, 13);
  const Fixture f(m.config());
  const auto before = logits_after_change(m, base, f, 0, -1);
  const auto after = logits_after_change(m, base, f, 0, 3);
  const int S = m.config().seq_len;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(before[i], after[i]) << i;  // start logits before position 3
  for (int i = 3; i < S; ++i) EXPECT_NE(before[i], after[i]) << i;
}

TEST(SpanTransformer, WorkspaceValuesCountWhatTheWorkspaceHolds) {
  gpu::CpuOps<double> ops;
  for (const LoraConfig& lora : {LoraConfig{}, every_projection(2)}) {
    const Model m(tiny(false), lora);
    auto ws = m.make_workspace(ops, 3);
    size_t held = ws.ids.size() + ws.embedded.size() + ws.lnf.size() + ws.logits.size();
    for (const auto& b : ws.blocks) {
      for (const auto* buf : {&b.ln1, &b.q, &b.k, &b.v, &b.probs, &b.attn, &b.x_mid, &b.ln2, &b.pre_gelu, &b.gelu,
                              &b.x_out}) {
        held += buf->size();
      }
      for (const auto& h : b.lora_hidden) held += h.size();
    }
    for (const auto* buf : {&ws.dx, &ws.dx2, &ws.dh, &ws.dq, &ws.dk, &ws.dv, &ws.dwide, &ws.dwide2, &ws.dlora,
                            &ws.dparam_scratch, &ws.dlogits}) {
      held += buf->size();
    }
    EXPECT_EQ(m.workspace_values(3), held);
  }
}

TEST(SpanTransformer, FlopsFollowTheSixNRule) {
  // With few tokens per sequence, attention is negligible and a training step costs 6 FLOPs per weight-matrix
  // parameter per token (2 forward, 4 backward); with frozen weights the backward's weight gradients are gone.
  TransformerConfig c;
  c.vocab = 100, c.seq_len = 4, c.dim = 512, c.heads = 8, c.layers = 4, c.ffn = 2048;
  const Model full(c, {});
  const double matrix_params = c.layers * (4.0 * 512 * 512 + 2.0 * 512 * 2048);
  const double per_token = (full.forward_flops() + full.backward_flops()) / c.seq_len;
  EXPECT_NEAR(per_token / (6 * matrix_params), 1.0, 0.01);
  EXPECT_NEAR(full.forward_flops() / c.seq_len / (2 * matrix_params), 1.0, 0.01);
  LoraConfig lora;
  lora.rank = 8;
  const Model adapted(c, lora);
  EXPECT_NEAR(adapted.backward_flops() / adapted.forward_flops(), 1.0, 0.02);
  EXPECT_GT(adapted.forward_flops(), full.forward_flops());  // the adapters' own GEMMs
}

TEST(SpanTransformer, TrainingReducesTheLossOnABatch) {
  gpu::CpuOps<float> ops;
  TransformerConfig c = tiny(false);
  const SpanTransformer<float> m(c, {});
  std::vector<float> base(m.base_param_count()), grads(base.size());
  m.init_base(base.data(), 14);
  const Fixture f(c);
  auto ws = m.make_workspace(ops, 3);
  const double first = m.loss_and_gradient(ops, ws, base.data(), nullptr, f.batch(), grads.data()).loss;
  double last = first;
  for (int step = 0; step < 200; ++step) {
    last = m.loss_and_gradient(ops, ws, base.data(), nullptr, f.batch(), grads.data()).loss;
    for (size_t i = 0; i < base.size(); ++i) base[i] -= 0.1f * grads[i];
  }
  EXPECT_LT(last, 0.2 * first);
  std::vector<SpanPrediction> p;
  EXPECT_EQ(m.evaluate(ops, ws, base.data(), nullptr, f.batch(), p).exact, 3);
}

TEST(SpanTransformer, NarrowFormatsRoundActivationsAndGradients) {
  // bf16 keeps 8 significant bits: the gradient moves by about 2^-8 relative, and not at all in fp32.
  gpu::CpuOps<float> ops;
  const SpanTransformer<float> m(tiny(false), every_projection(2));
  std::vector<float> base(m.base_param_count());
  m.init_base(base.data(), 15);
  const std::vector<double> noise = random_vector(m.adapter_param_count(), 16, 0.3);
  const std::vector<float> adapters(noise.begin(), noise.end());
  const Fixture f(m.config());
  auto ws = m.make_workspace(ops, 3);
  std::vector<float> exact(m.adapter_param_count()), fp32(exact.size()), bf16(exact.size());
  m.loss_and_gradient(ops, ws, base.data(), adapters.data(), f.batch(), exact.data());
  NumericsOptions same;
  m.loss_and_gradient(ops, ws, base.data(), adapters.data(), f.batch(), fp32.data(), same);
  EXPECT_EQ(exact, fp32);
  NumericsOptions narrow;
  narrow.activations = gpu::NumberFormat::Bf16;
  narrow.gradients = gpu::NumberFormat::Bf16;
  m.loss_and_gradient(ops, ws, base.data(), adapters.data(), f.batch(), bf16.data(), narrow);
  double diff = 0, norm = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    diff += std::pow(double(bf16[i]) - exact[i], 2);
    norm += std::pow(double(exact[i]), 2);
    // Every gradient is stored in bf16: its low 16 bits are zero.
    uint32_t bits;
    std::memcpy(&bits, &bf16[i], sizeof bits);
    EXPECT_EQ(bits & 0xffffu, 0u) << i;
  }
  EXPECT_GT(std::sqrt(diff / norm), 1e-4);
  EXPECT_LT(std::sqrt(diff / norm), 0.05);
}

TEST(SpanTransformer, RejectsWhatCannotBeBuilt) {
  TransformerConfig c = tiny(false);
  c.heads = 3;
  EXPECT_THROW(Model(c, {}), std::invalid_argument);
  LoraConfig l;
  l.rank = 9;  // dim is 8
  EXPECT_THROW(Model(tiny(false), l), std::invalid_argument);
  l.rank = 2;
  l.q = l.v = false;
  EXPECT_THROW(Model(tiny(false), l), std::invalid_argument);
  TransformerConfig odd = tiny_rotary(false);
  odd.dim = 6;  // two heads of 3: a pair cannot be formed
  EXPECT_THROW(Model(odd, {}), std::invalid_argument);
  odd.dim = 8, odd.rotary_base = 1.0;
  EXPECT_THROW(Model(odd, {}), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::models
