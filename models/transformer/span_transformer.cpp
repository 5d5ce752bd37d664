// The span transformer's parameter layout, initialisation, adapter merging and FLOP counts. The passes themselves
// are in span_transformer_passes.cpp.
#include "models/transformer/span_transformer.hpp"

#include <cmath>
#include <stdexcept>

#include "models/random.hpp"

namespace dtsim::models {

namespace {

constexpr size_t kNone = static_cast<size_t>(-1);

void require_positive(int value, const char* field) {
  if (value <= 0) {
    throw std::invalid_argument(std::string("transformer ") + field + " must be positive, got " +
                                std::to_string(value));
  }
}

}  // namespace

const char* projection_name(Projection p) {
  switch (p) {
    case Projection::Q: return "q";
    case Projection::K: return "k";
    case Projection::V: return "v";
    case Projection::O: return "o";
    case Projection::Mlp1: return "mlp1";
    case Projection::Mlp2: return "mlp2";
  }
  return "?";
}

// The shape of a block's projection: inputs × outputs.
struct ProjectionShape {
  int in = 0;
  int out = 0;
};

// Where a projection's weight sits among its block's kBlockTensors tensors: Q K V O at 2, 4, 6, 8, the MLP's at 12
// and 14.
static int weight_entry(Projection p) {
  const int pi = static_cast<int>(p);
  return pi < 4 ? 2 + 2 * pi : (p == Projection::Mlp1 ? 12 : 14);
}

static ProjectionShape projection_shape(const TransformerConfig& c, Projection p) {
  if (p == Projection::Mlp1) return {c.dim, c.ffn};
  if (p == Projection::Mlp2) return {c.ffn, c.dim};
  return {c.dim, c.dim};
}

const NameTable<PositionEncoding>& position_encoding_table() {
  static const NameTable<PositionEncoding> table{{PositionEncoding::Learned, "learned"},
                                                 {PositionEncoding::Rotary, "rotary"}};
  return table;
}

const char* to_string(PositionEncoding positions) { return position_encoding_table().name(positions); }

void validate(const TransformerConfig& config, const LoraConfig& lora) {
  require_positive(config.vocab, "vocab");
  require_positive(config.seq_len, "seq_len");
  require_positive(config.dim, "dim");
  require_positive(config.heads, "heads");
  require_positive(config.layers, "layers");
  require_positive(config.ffn, "ffn");
  if (config.dim % config.heads != 0) {
    throw std::invalid_argument("transformer dim " + std::to_string(config.dim) + " is not a multiple of heads " +
                                std::to_string(config.heads) + ": choose heads that divide it");
  }
  if (!(config.ln_eps > 0)) throw std::invalid_argument("transformer ln_eps must be positive");
  if (config.positions == PositionEncoding::Rotary) {
    if (config.head_dim() % 2 != 0) {
      throw std::invalid_argument("rotary positions turn pairs of values, but the head width dim/heads = " +
                                  std::to_string(config.head_dim()) + " is odd: choose dim and heads for an even one");
    }
    if (!(config.rotary_base > 1) || !std::isfinite(config.rotary_base)) {
      throw std::invalid_argument("transformer rotary_base must be finite and above 1");
    }
  }
  if (lora.rank < 0) throw std::invalid_argument("lora rank must be 0 (no adapters) or positive");
  if (lora.enabled()) {
    if (!(lora.alpha > 0) || !std::isfinite(lora.alpha)) throw std::invalid_argument("lora alpha must be positive");
    if (!lora.q && !lora.k && !lora.v && !lora.o && !lora.mlp) {
      throw std::invalid_argument("lora rank " + std::to_string(lora.rank) +
                                  " adapts no projection: enable at least one of q, k, v, o, mlp");
    }
    const int smallest = std::min(config.dim, config.ffn);
    if (lora.rank > smallest) {
      throw std::invalid_argument("lora rank " + std::to_string(lora.rank) + " exceeds the smallest projection side " +
                                  std::to_string(smallest) + ": a low-rank adapter needs rank below it");
    }
  }
}

template <class T>
bool SpanTransformer<T>::adapted(Projection p) const {
  if (!lora_.enabled()) return false;
  switch (p) {
    case Projection::Q: return lora_.q;
    case Projection::K: return lora_.k;
    case Projection::V: return lora_.v;
    case Projection::O: return lora_.o;
    case Projection::Mlp1:
    case Projection::Mlp2: return lora_.mlp;
  }
  return false;
}

template <class T>
SpanTransformer<T>::SpanTransformer(const TransformerConfig& config, const LoraConfig& lora)
    : config_(config), lora_(lora) {
  validate(config, lora);
  const size_t d = config.dim, f = config.ffn;
  auto add = [this](const std::string& name, size_t size, bool is_bias) {
    base_tensors_.push_back({name, base_count_, size, is_bias});
    base_count_ += size;
    return base_count_ - size;
  };
  wte_ = add("wte", static_cast<size_t>(config.vocab) * d, false);
  if (config.positions == PositionEncoding::Learned) wpe_ = add("wpe", static_cast<size_t>(config.seq_len) * d, false);
  embedding_tensors_ = base_tensors_.size();
  for (int b = 0; b < config.layers; ++b) {
    const std::string p = "block" + std::to_string(b) + ".";
    block_offsets_.push_back(add(p + "ln1.gain", d, true));
    block_offsets_.push_back(add(p + "ln1.shift", d, true));
    for (const Projection attention : {Projection::Q, Projection::K, Projection::V, Projection::O}) {
      block_offsets_.push_back(add(p + projection_name(attention) + ".weight", d * d, false));
      block_offsets_.push_back(add(p + projection_name(attention) + ".bias", d, true));
    }
    block_offsets_.push_back(add(p + "ln2.gain", d, true));
    block_offsets_.push_back(add(p + "ln2.shift", d, true));
    block_offsets_.push_back(add(p + "mlp1.weight", d * f, false));
    block_offsets_.push_back(add(p + "mlp1.bias", f, true));
    block_offsets_.push_back(add(p + "mlp2.weight", f * d, false));
    block_offsets_.push_back(add(p + "mlp2.bias", d, true));
  }
  lnf_ = add("lnf.gain", d, true);
  add("lnf.shift", d, true);
  head_ = add("head.weight", d * 2, false);
  add("head.bias", 2, true);

  adapter_offsets_.assign(static_cast<size_t>(config.layers) * kProjections, kNone);
  if (!lora.enabled()) return;
  const size_t r = lora.rank;
  for (int b = 0; b < config.layers; ++b) {
    for (int pi = 0; pi < kProjections; ++pi) {
      const auto p = static_cast<Projection>(pi);
      if (!adapted(p)) continue;
      const ProjectionShape s = projection_shape(config, p);
      const std::string name = "block" + std::to_string(b) + "." + projection_name(p) + ".lora_";
      adapter_offsets_[b * kProjections + pi] = adapter_count_;
      adapter_tensors_.push_back({name + "a", adapter_count_, s.in * r, false});
      adapter_count_ += s.in * r;
      adapter_tensors_.push_back({name + "b", adapter_count_, r * s.out, false});
      adapter_count_ += r * s.out;
    }
  }
}

template <class T>
std::vector<ParamTensor> SpanTransformer<T>::projection_weights() const {
  std::vector<ParamTensor> weights;
  for (int b = 0; b < config_.layers; ++b) {
    for (int pi = 0; pi < kProjections; ++pi) {
      // The base tensors are the embeddings, then each block's kBlockTensors in order.
      weights.push_back(
          base_tensors_[embedding_tensors_ + static_cast<size_t>(b) * kBlockTensors + weight_entry(Projection(pi))]);
    }
  }
  return weights;
}

template <class T>
std::string SpanTransformer<T>::description() const {
  std::string text = std::string(config_.causal ? "decoder" : "encoder") + " transformer " +
                     std::to_string(config_.layers) + "×" + std::to_string(config_.dim) + " (" +
                     std::to_string(config_.heads) + " heads, ffn " + std::to_string(config_.ffn) + ", " +
                     to_string(config_.positions) + " positions, " +
                     std::to_string(base_count_) + " parameters)";
  if (lora_.enabled()) {
    text += " with LoRA r=" + std::to_string(lora_.rank) + " (" + std::to_string(adapter_count_) + " trained)";
  }
  return text;
}

template <class T>
void SpanTransformer<T>::init_base(T* host, uint64_t seed) const {
  Rng rng(seed, "transformer-init");
  for (const ParamTensor& t : base_tensors_) {
    const bool gain = t.name.size() >= 5 && t.name.compare(t.name.size() - 5, 5, ".gain") == 0;
    for (size_t i = 0; i < t.size; ++i) {
      host[t.offset + i] = gain ? T(1) : t.is_bias ? T(0) : static_cast<T>(0.02 * rng.normal());
    }
  }
}

template <class T>
void SpanTransformer<T>::init_adapters(T* host, uint64_t seed) const {
  Rng rng(seed, "lora-init");
  for (size_t i = 0; i < adapter_tensors_.size(); i += 2) {
    const ParamTensor& a = adapter_tensors_[i];
    const ParamTensor& b = adapter_tensors_[i + 1];
    const double fan_in = static_cast<double>(a.size) / lora_.rank;
    const double bound = std::sqrt(6.0 / fan_in);  // Kaiming uniform, as torch.nn.init.kaiming_uniform_ with a=0
    for (size_t j = 0; j < a.size; ++j) host[a.offset + j] = static_cast<T>(rng.uniform(-bound, bound));
    for (size_t j = 0; j < b.size; ++j) host[b.offset + j] = T(0);
  }
}

template <class T>
void SpanTransformer<T>::merge(const T* host_base, const T* host_adapters, T* host_merged) const {
  for (size_t i = 0; i < base_count_; ++i) host_merged[i] = host_base[i];
  if (!lora_.enabled()) return;
  const int r = lora_.rank;
  const double s = lora_.scale();
  for (int b = 0; b < config_.layers; ++b) {
    for (int pi = 0; pi < kProjections; ++pi) {
      const auto p = static_cast<Projection>(pi);
      const size_t a_off = adapter_offset(b, p);
      if (a_off == kNone) continue;
      const ProjectionShape sh = projection_shape(config_, p);
      T* w = host_merged + block_offsets_[b * kBlockTensors + weight_entry(p)];
      const T* A = host_adapters + a_off;
      const T* B = A + static_cast<size_t>(sh.in) * r;
      for (int i = 0; i < sh.in; ++i) {
        for (int j = 0; j < sh.out; ++j) {
          double ab = 0.0;
          for (int k = 0; k < r; ++k) ab += static_cast<double>(A[i * r + k]) * B[k * sh.out + j];
          w[static_cast<size_t>(i) * sh.out + j] = static_cast<T>(w[static_cast<size_t>(i) * sh.out + j] + s * ab);
        }
      }
    }
  }
}

// FLOPs per sequence of seq_len tokens. Per token: a projection in × out costs 2·in·out + out forward (GEMM, bias)
// and an adapter 2·in·r + 2·r·out more; attention costs, per head and visible key, 2·head_dim for q·k, 6 for the
// scaled, max-subtracted softmax (scale, max, subtract, exp, sum, divide) and 2·head_dim for p·v; a layer norm 8 per
// feature (layer.hpp); GELU 5 per value; the residual adds 1 per value. An encoder sees seq_len keys per query, a
// decoder (seq_len + 1)/2 on average.
template <class T>
double SpanTransformer<T>::forward_flops() const {
  const double d = config_.dim, f = config_.ffn, S = config_.seq_len, H = config_.heads, r = lora_.rank;
  const double keys = config_.causal ? (S + 1) / 2 : S;
  const bool rotary = config_.positions == PositionEncoding::Rotary;
  // Adding the position embedding, or rotating q and k in every block (4 multiplies and 2 adds per pair).
  double per_token = rotary ? config_.layers * 6.0 * d : d;
  for (int pi = 0; pi < kProjections; ++pi) {
    const auto p = static_cast<Projection>(pi);
    const ProjectionShape s = projection_shape(config_, p);
    per_token += config_.layers * (2.0 * s.in * s.out + s.out + (adapted(p) ? 2.0 * r * (s.in + s.out) : 0.0));
  }
  per_token += config_.layers * (keys * (4.0 * d + 6.0 * H) + 2 * 8.0 * d + 5.0 * f + 2 * d);
  per_token += 8.0 * d + 2.0 * d * 2 + 2;  // final layer norm and the head
  return S * per_token + 2 * 4.0 * S;      // two softmaxes over the positions
}

// Backward per token: each projection's input gradient (2·in·out) and, when the base trains, its weight gradient
// (2·in·out + out); an adapter's four GEMMs (dB, dh·Bᵀ, dA, its input gradient) 4·r·(in + out) with the scale
// folded into them; attention 8·head_dim + 4 per head and visible key (dv, dp, dq, dk; ds = p·(dp − Σp·dp));
// a layer norm 8 per feature for its input gradient and 9 more for its gain and shift; GELU 11; the residual
// branches' sums 1 per value. The embedding's scatter-add (1 per value) and the position sums count only when the
// base trains.
template <class T>
double SpanTransformer<T>::backward_flops() const {
  const bool base = !lora_.enabled();
  const double d = config_.dim, f = config_.ffn, S = config_.seq_len, H = config_.heads, r = lora_.rank;
  const double keys = config_.causal ? (S + 1) / 2 : S;
  const bool rotary = config_.positions == PositionEncoding::Rotary;
  // The embeddings' gradients when the base trains (token rows, and position rows with a learned table), and the
  // inverse rotation of dq and dk in every block with rotary positions.
  double per_token = (base ? (rotary ? 1.0 : 2.0) * d : 0.0) + (rotary ? config_.layers * 6.0 * d : 0.0);
  for (int pi = 0; pi < kProjections; ++pi) {
    const auto p = static_cast<Projection>(pi);
    const ProjectionShape s = projection_shape(config_, p);
    double cost = 2.0 * s.in * s.out + (base ? 2.0 * s.in * s.out + s.out : 0.0);
    if (adapted(p)) cost += 4.0 * r * (s.in + s.out);
    per_token += config_.layers * cost;
  }
  const double ln = 8.0 * d + (base ? 9.0 * d : 0.0);
  per_token += config_.layers * (keys * (8.0 * d + 4.0 * H) + 2 * ln + 11.0 * f + 2 * d);
  per_token += ln + 2.0 * 2 * d + (base ? 2.0 * 2 * d + 2 : 0.0);
  return S * per_token + 2 * 2.0 * S;
}

template class SpanTransformer<float>;
template class SpanTransformer<double>;

}  // namespace dtsim::models
