#include "models/workload/transformer.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace dtsim::models {
namespace {

// Builds the layer list of one transformer; every figure is per sample (one sequence of s tokens).
class TransformerBuilder {
 public:
  explicit TransformerBuilder(const TransformerSpec& spec)
      : spec_(spec),
        s_(spec.sequence),
        d_(spec.hidden),
        head_dim_(static_cast<double>(spec.hidden) / spec.heads),
        kv_heads_(spec.kv_heads > 0 ? spec.kv_heads : spec.heads),
        base_trains_(spec.lora.rank == 0) {}

  std::vector<LayerCost> build() {
    embedding();
    for (int b = 0; b < spec_.layers; ++b) block(b);
    if (spec_.final_norm) norm("final_norm", -1, d_);
    if (spec_.lm_head) head();
    if (spec_.span_head) span_head();
    if (spec_.pooler) pooler();
    return std::move(layers_);
  }

 private:
  double q_width() const { return spec_.heads * head_dim_; }
  double kv_width() const { return kv_heads_ * head_dim_; }
  bool adapted(const std::string& target) const {
    const auto& t = spec_.lora.targets;
    return spec_.lora.rank > 0 && std::find(t.begin(), t.end(), target) != t.end();
  }

  LayerCost& add(std::string name, std::string kind, int block) {
    return append_layer(layers_, std::move(name), std::move(kind), block);
  }

  // A linear layer of `tokens` rows, in → sum(outs) (several projections fused, e.g. q, k and v, which
  // share their input and so keep it once), with a LoRA adapter on each output listed in `targets`.
  void linear(const std::string& name, int block, double tokens, double in, const std::vector<double>& outs,
              const std::vector<std::string>& targets, bool trains) {
    double out = 0;
    for (const double o : outs) out += o;
    LayerCost& l = add(name, "linear", block);
    const double weights = in * out + (spec_.bias ? out : 0);
    l.parameters = static_cast<std::uint64_t>(weights);
    l.trainable = trains ? l.parameters : 0;
    l.forward_flops = 2 * tokens * in * out;
    // Input gradient always (the layers below need it); weight gradient only for trained weights.
    l.backward_flops = (trains ? 2 : 1) * l.forward_flops;
    l.input_elements = tokens * in;
    l.forward_traffic = tokens * (in + out);
    l.backward_traffic = tokens * (out + in) + (trains ? tokens * in : 0);
    l.saved_elements = tokens * in;
    l.forward_kernels = 1;
    l.backward_kernels = trains ? 2 : 1;
    using G = LayerProduct::Grows;
    l.forward_products.push_back({{tokens, out, in}, G::Rows});
    l.backward_products.push_back({{tokens, in, out}, G::Rows});          // input gradient
    if (trains) l.backward_products.push_back({{in, out, tokens}, G::Inner});  // weight gradient
    for (std::size_t i = 0; i < outs.size(); ++i) {
      if (i >= targets.size() || !adapted(targets[i])) continue;
      // x A (in → r), then (x A) B (r → out), scaled and added: both adapter matrices train.
      const double r = spec_.lora.rank;
      const double adapter = r * (in + outs[i]);
      l.parameters += static_cast<std::uint64_t>(adapter);
      l.trainable += static_cast<std::uint64_t>(adapter);
      l.forward_flops += 2 * tokens * adapter;
      l.backward_flops += 4 * tokens * adapter;
      l.forward_traffic += tokens * (2 * r + 2 * outs[i]);
      l.backward_traffic += tokens * (2 * r + outs[i] + in);
      l.saved_elements += tokens * r;  // x A, the input of B (x itself is already kept)
      // x A, then (x A) B; backward: the gradients of x A's output and of x through B and A, and both weights'.
      l.forward_products.push_back({{tokens, r, in}, G::Rows});
      l.forward_products.push_back({{tokens, outs[i], r}, G::Rows});
      l.backward_products.push_back({{tokens, r, outs[i]}, G::Rows});
      l.backward_products.push_back({{tokens, in, r}, G::Rows});
      l.backward_products.push_back({{r, outs[i], tokens}, G::Inner});
      l.backward_products.push_back({{in, r, tokens}, G::Inner});
      l.forward_kernels += 3;
      l.backward_kernels += 4;
    }
  }

  void norm(const std::string& name, int block, double width) {
    LayerCost& l = add(name, "norm", block);
    l.parameters = static_cast<std::uint64_t>(spec_.norm == NormKind::LayerNorm ? 2 * width : width);
    l.trainable = base_trains_ ? l.parameters : 0;
    l.input_elements = s_ * width;
    l.forward_traffic = 2 * s_ * width;
    l.backward_traffic = 3 * s_ * width;
    l.saved_elements = s_ * width;
    l.forward_kernels = 1;
    l.backward_kernels = 2;
  }

  // The residual add, with the dropout before it (whose mask is kept).
  void residual(const std::string& name, int block) {
    LayerCost& l = add(name, "add", block);
    l.input_elements = s_ * d_;
    l.forward_traffic = 3 * s_ * d_;
    l.backward_traffic = 2 * s_ * d_;
    l.saved_mask_bytes = spec_.dropout ? s_ * d_ : 0;
    l.forward_kernels = 1;
    l.backward_kernels = spec_.dropout ? 1 : 0;
  }

  void embedding() {
    LayerCost& l = add("embedding", "embedding", -1);
    const double tables = static_cast<double>(spec_.vocab) + spec_.max_positions + spec_.token_types;
    l.parameters = static_cast<std::uint64_t>(tables * d_);
    l.trainable = base_trains_ ? l.parameters : 0;
    const int lookups = 1 + (spec_.max_positions > 0) + (spec_.token_types > 0);
    l.forward_traffic = (lookups + 1) * s_ * d_;  // each table's rows read, their sum written
    l.backward_traffic = base_trains_ ? (lookups + 1) * s_ * d_ : 0;  // rows scattered into each table's gradient
    l.saved_mask_bytes = spec_.dropout ? s_ * d_ : 0;
    l.forward_kernels = lookups;
    l.backward_kernels = base_trains_ ? lookups : 0;
    if (spec_.embedding_norm) norm("embedding_norm", -1, d_);
  }

  void block(int b) {
    const std::string p = "block" + std::to_string(b) + ".";
    norm(p + "attention_norm", b, d_);
    linear(p + "attention.qkv", b, s_, d_, {q_width(), kv_width(), kv_width()}, {"q", "k", "v"}, base_trains_);
    attention(p + "attention.core", b);
    linear(p + "attention.o", b, s_, q_width(), {static_cast<double>(d_)}, {"o"}, base_trains_);
    residual(p + "attention.residual", b);
    norm(p + "mlp_norm", b, d_);
    const double f = spec_.ffn;
    if (spec_.feed_forward == FeedForward::SwiGlu) {
      linear(p + "mlp.gate_up", b, s_, d_, {f, f}, {"gate", "up"}, base_trains_);
      activation(p + "mlp.swiglu", b, 2 * f, f);
    } else {
      linear(p + "mlp.up", b, s_, d_, {f}, {"up"}, base_trains_);
      activation(p + "mlp.gelu", b, f, f);
    }
    linear(p + "mlp.down", b, s_, f, {static_cast<double>(d_)}, {"down"}, base_trains_);
    residual(p + "mlp.residual", b);
  }

  // Scores Q K^T, softmax (and dropout), then the weighted sum of V: 2 products of s × s × head width per head.
  void attention(const std::string& name, int block) {
    LayerCost& l = add(name, "attention", block);
    const double a = spec_.heads, s = s_, qw = q_width(), kvw = kv_width();
    const double qkv = s * (qw + 2 * kvw), scores = a * s * s;
    l.forward_flops = 4 * s * s * qw;
    l.backward_flops = 2 * l.forward_flops;  // both operands' gradients of both products
    l.input_elements = qkv;
    if (spec_.flash_attention) {
      // Scores are rebuilt block by block in the backward pass (one more Q K^T); only the softmax
      // statistics (fp32, one per head and token) are kept besides Q, K and V.
      l.rebuilt_in_backward = 2 * s * s * qw;
      l.backward_flops += l.rebuilt_in_backward;
      l.forward_traffic = qkv + s * qw;
      l.backward_traffic = 2 * qkv + 2 * s * qw;
      l.saved_elements = qkv;
      l.saved_fp32_elements = a * s;
      l.forward_kernels = 1;
      l.backward_kernels = 2;
      l.fused_attention = {static_cast<double>(spec_.heads), static_cast<double>(head_dim_), s, spec_.causal};
    } else {
      // Per head: scores Q K^T (s × s over the head width), then P V (s × head width over s); backward, each
      // product's two operand gradients. Query heads share key/value heads under grouped-query attention,
      // which changes no product's shape.
      using G = LayerProduct::Grows;
      const double hd = head_dim_;
      l.forward_products = {{{s, s, hd, a}, G::Count}, {{s, hd, s, a}, G::Count}};
      l.backward_products = {{{s, hd, s, a}, G::Count}, {{s, hd, s, a}, G::Count},   // dQ, dK from dScores
                             {{s, s, hd, a}, G::Count}, {{s, hd, s, a}, G::Count}};  // dP from dO V^T, dV from P^T dO
      // Kept: Q and K for the scores' gradient, the softmax output, V and, with dropout, the mask and the
      // dropped-out probabilities (Korthikanti et al. 2022, section 4.1).
      l.forward_traffic = qkv + s * qw + (spec_.dropout ? 6 : 4) * scores;
      l.backward_traffic = 2 * qkv + 2 * s * qw + (spec_.dropout ? 6 : 4) * scores;
      l.saved_elements = qkv + scores * (spec_.dropout ? 2 : 1);
      l.saved_mask_bytes = spec_.dropout ? scores : 0;
      l.forward_kernels = spec_.dropout ? 4 : 3;
      l.backward_kernels = spec_.dropout ? 5 : 4;
    }
  }

  // GELU of the up projection, or SwiGLU: silu(gate) × up, keeping its input (`in` wide) for the backward.
  void activation(const std::string& name, int block, double in, double out) {
    LayerCost& l = add(name, "activation", block);
    l.input_elements = s_ * in;
    l.forward_traffic = s_ * (in + out);
    l.backward_traffic = s_ * (2 * in + out);
    l.saved_elements = s_ * in;
    l.forward_kernels = 1;
    l.backward_kernels = 1;
  }

  void head() {
    if (spec_.head_transform) {
      linear("head.transform", -1, s_, d_, {static_cast<double>(d_)}, {}, base_trains_);
      activation("head.gelu", -1, d_, d_);
      norm("head.norm", -1, d_);
    }
    const double v = spec_.vocab;
    linear("head.vocab", -1, s_, d_, {v}, {}, base_trains_);
    LayerCost& h = layers_.back();
    // A tied projection is the token embedding's matrix: its weights and gradient are counted there.
    const double own = (spec_.tied_embeddings ? 0 : v * d_) + (spec_.head_bias ? v : 0);
    h.parameters = static_cast<std::uint64_t>(own);
    h.trainable = base_trains_ ? h.parameters : 0;
    append_loss_layer(layers_, s_ * v);
  }

  // Start and end logits per token (hidden → 2, biased like the other linear layers), then a softmax
  // cross-entropy over the sequence's positions for each.
  void span_head() {
    linear("head.span", -1, s_, d_, {2.0}, {}, base_trains_);
    append_loss_layer(layers_, s_ * 2);
  }

  // BERT's pooler on the first token, then its next-sentence classifier.
  void pooler() {
    linear("pooler", -1, 1, d_, {static_cast<double>(d_)}, {}, base_trains_);
    layers_.back().parameters = static_cast<std::uint64_t>(static_cast<double>(d_) * d_ + d_);  // always biased
    layers_.back().trainable = base_trains_ ? layers_.back().parameters : 0;
    if (spec_.pooler_classes > 0) {
      linear("pooler.classifier", -1, 1, d_, {static_cast<double>(spec_.pooler_classes)}, {}, base_trains_);
      layers_.back().parameters = static_cast<std::uint64_t>((d_ + 1.0) * spec_.pooler_classes);
      layers_.back().trainable = base_trains_ ? layers_.back().parameters : 0;
    }
  }

  const TransformerSpec& spec_;
  const double s_, d_, head_dim_, kv_heads_;
  const bool base_trains_;
  std::vector<LayerCost> layers_;
};

}  // namespace

void validate(const TransformerSpec& spec) {
  require_field(spec.layers > 0, "layers", "must be a positive whole number");
  require_field(spec.hidden > 0, "hidden", "must be a positive whole number");
  require_field(spec.heads > 0, "heads", "must be a positive whole number");
  require_field(spec.hidden % spec.heads == 0, "heads",
          "must divide hidden (" + std::to_string(spec.hidden) + ") into whole head widths");
  require_field(spec.kv_heads >= 0 && (spec.kv_heads == 0 || spec.heads % spec.kv_heads == 0), "kv_heads",
          "must divide heads (" + std::to_string(spec.heads) + "): each key/value head serves a whole group");
  require_field(spec.ffn > 0, "ffn", "must be a positive whole number");
  require_field(spec.vocab > 0, "vocab", "must be a positive whole number");
  require_field(spec.sequence > 0, "sequence", "must be a positive whole number");
  require_field(spec.max_positions == 0 || spec.sequence <= spec.max_positions, "sequence",
          "exceeds max_positions (" + std::to_string(spec.max_positions) + "), the learned position table");
  require_field(spec.max_positions >= 0 && spec.token_types >= 0 && spec.pooler_classes >= 0, "max_positions",
          "token_types and pooler_classes must not be negative");
  require_field(!spec.tied_embeddings || spec.lm_head, "tied_embeddings", "needs lm_head");
  require_field(!(spec.span_head && (spec.lm_head || spec.pooler)), "span_head",
                "is a head of its own: turn lm_head and pooler off");
  require_field(spec.pooler_classes == 0 || spec.pooler, "pooler_classes", "needs pooler");
  require_field(spec.lora.rank >= 0, "lora.rank", "must not be negative");
  require_field(spec.lora.rank == 0 || !spec.lora.targets.empty(), "lora.targets", "must name at least one projection");
  const std::vector<std::string> known = spec.feed_forward == FeedForward::SwiGlu
                                             ? std::vector<std::string>{"q", "k", "v", "o", "gate", "up", "down"}
                                             : std::vector<std::string>{"q", "k", "v", "o", "up", "down"};
  for (const auto& t : spec.lora.targets) {
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    // Echoed only when plain, so that a message never carries control characters from a file.
    const bool plain = !t.empty() && t.size() <= 32 && std::all_of(t.begin(), t.end(), [](unsigned char c) {
      return std::isalnum(c) || c == '_';
    });
    require_field(std::find(known.begin(), known.end(), t) != known.end(), "lora.targets",
                  "has '" + (plain ? t : std::string("?")) + "', not a projection of this block; use " + list);
  }
  // A rank at or above a projection's smaller side adds more values than the product B A can use (rank 100,000 on
  // a 4096-wide layer trained more values than the base model holds).
  if (spec.lora.rank > 0 && spec.heads > 0) {
    const long long kv_width = static_cast<long long>(spec.hidden) / spec.heads * (spec.kv_heads > 0 ? spec.kv_heads : spec.heads);
    long long narrowest = spec.hidden;
    for (const auto& t : spec.lora.targets) {
      if (t == "k" || t == "v") narrowest = std::min(narrowest, kv_width);
      if (t == "gate" || t == "up" || t == "down") narrowest = std::min<long long>(narrowest, spec.ffn);
    }
    // Below, as the QA transformer's lora.rank must be: a rank as wide as the matrix is no low-rank update.
    require_field(spec.lora.rank < narrowest, "lora.rank",
                  "is " + std::to_string(spec.lora.rank) + ", not below the narrowest adapted projection's " +
                      std::to_string(narrowest) + " (a low-rank adapter is narrower than its matrix); use at most " +
                      std::to_string(narrowest - 1));
  }
}

std::vector<LayerCost> transformer_layers(const TransformerSpec& spec) {
  validate(spec);
  return TransformerBuilder(spec).build();
}

}  // namespace dtsim::models
