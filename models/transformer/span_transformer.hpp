// A small transformer for extractive question answering, with optional LoRA adapters, written the way llm.c
// writes GPT-2: one flat parameter vector with named tensors, an activation workspace, and a forward and a
// backward pass that read top to bottom as calls to the backend's ops (gpu/ops.hpp), so that the same code runs
// on the CPU reference and on CUDA.
//
// The network, for a batch of sequences of `seq_len` token ids with per-sequence valid lengths:
//   x = wte[token] + wpe[position]                                     (wpe only with learned positions)
//   per block:  x += Wo·Attention(Wq·LN1(x), Wk·LN1(x), Wv·LN1(x))      (multi-head, pre-norm; with rotary
//                                                                        positions q and k are rotated first)
//               x += W2·GELU(W1·LN2(x))
//   logits = Whead·LNf(x)                                              (2 per token: span start and span end)
// The loss of a sequence is the mean of two softmax cross-entropies over its valid positions, one for the answer's
// start and one for its end (BERT's span-extraction head); padded positions take no part.
//
// LoRA (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models"): an adapted projection W (in × out)
// computes h·W + (α/r)·(h·A)·B with A (in × r) and B (r × out). The base parameters are then frozen: the trained
// vector is the adapters alone, and backward computes neither the base weights' gradients nor their FLOPs.
// Merging folds (α/r)·A·B into W, after which the base model alone gives the same logits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/buffer.hpp"
#include "gpu/ops.hpp"
#include "models/layer.hpp"
#include "models/name_table.hpp"
#include "models/network.hpp"

namespace dtsim::models {

// How the model knows where a token is: a learned table of one vector per position added to the token embedding
// (GPT-2, BERT), or rotary embeddings (RoFormer; LLaMA), which turn each head's queries and keys by an angle
// proportional to the position so that attention scores depend on the offset between query and key. Relative
// offsets are what reading a fact needs ("the value two tokens after the asked attribute"), and rotary attention
// represents them at every position at once; a learned table has to learn them position by position.
enum class PositionEncoding { Learned, Rotary };
// "learned" and "rotary".
const NameTable<PositionEncoding>& position_encoding_table();
const char* to_string(PositionEncoding positions);

struct TransformerConfig {
  int vocab = 0;
  int seq_len = 0;
  int dim = 64;
  int heads = 4;
  int layers = 2;
  int ffn = 256;        // width of each block's MLP
  bool causal = false;  // a decoder (each position sees the ones before it) or an encoder (it sees every valid one)
  double ln_eps = 1e-5;
  PositionEncoding positions = PositionEncoding::Learned;
  double rotary_base = 10000.0;  // pair m of a head turns by position · rotary_base^(−2m/head_dim)
  int head_dim() const { return dim / heads; }
};

// Which projections carry adapters. Rank 0 means none: the base model is what trains.
struct LoraConfig {
  int rank = 0;
  double alpha = 16.0;  // the adapters' output is scaled by alpha / rank
  bool q = true, k = false, v = true, o = false;  // the attention projections (q and v: the LoRA paper's choice)
  bool mlp = false;                               // also W1 and W2
  bool enabled() const { return rank > 0; }
  double scale() const { return enabled() ? alpha / rank : 0.0; }
};

// The projections of a block that LoRA can adapt, in the order their adapters are stored.
enum class Projection { Q, K, V, O, Mlp1, Mlp2 };
constexpr int kProjections = 6;
// Its name in tensor names ("q", "k", "v", "o", "mlp1", "mlp2").
const char* projection_name(Projection p);
// Base tensors per block: ln1 gain and shift, then weight and bias of Q, K, V, O, ln2 gain and shift, then weight
// and bias of Mlp1 and Mlp2.
constexpr int kBlockTensors = 16;

// Throws std::invalid_argument naming the field for a configuration that cannot be built (dim not a multiple of
// heads, non-positive sizes, an adapter rank above the projection's smaller side).
void validate(const TransformerConfig& config, const LoraConfig& lora);

// A batch of sequences in host memory: `batch` × seq_len token ids, valid lengths, and the answer spans' inclusive
// start and end positions (ignored by forward-only calls; null there).
struct SpanBatch {
  int batch = 0;
  const int32_t* tokens = nullptr;
  const int32_t* lengths = nullptr;
  const int32_t* answer_start = nullptr;
  const int32_t* answer_end = nullptr;
};

// A predicted span per sequence: the pair i ≤ j < i + max_answer_tokens, both valid positions, that maximises
// start_logit[i] + end_logit[j] (the usual SQuAD decoding).
struct SpanPrediction {
  int start = 0;
  int end = 0;
};

struct SpanLoss {
  double loss = 0.0;  // summed over the batch: Σ ½(CE_start + CE_end)
  int exact = 0;      // sequences whose decoded span is the answer's positions
};

template <class T>
struct TransformerWorkspace;

template <class T>
class SpanTransformer {
 public:
  SpanTransformer(const TransformerConfig& config, const LoraConfig& lora);

  const TransformerConfig& config() const { return config_; }
  const LoraConfig& lora() const { return lora_; }
  std::string description() const;

  size_t base_param_count() const { return base_count_; }
  size_t adapter_param_count() const { return adapter_count_; }
  // The trained vector: the adapters with LoRA, otherwise the base parameters.
  size_t trained_param_count() const { return lora_.enabled() ? adapter_count_ : base_count_; }
  const std::vector<ParamTensor>& base_tensors() const { return base_tensors_; }
  const std::vector<ParamTensor>& adapter_tensors() const { return adapter_tensors_; }
  // The projection weight matrices (every block's q, k, v, o, mlp1 and mlp2 weights, in that order): what LoRA can
  // adapt and what a QLoRA base stores quantised.
  std::vector<ParamTensor> projection_weights() const;
  // Offset of block b's adapter A of projection p in the adapter vector (B follows A); npos when not adapted.
  size_t adapter_offset(int block, Projection p) const { return adapter_offsets_[block * kProjections + int(p)]; }
  bool adapted(Projection p) const;

  // Host initialisation. Base: N(0, 0.02²) weights as GPT-2, zero biases, unit layer-norm gains. Adapters: A
  // Kaiming-uniform, B zero, so that the adapted model starts as the base model (LoRA's initialisation).
  void init_base(T* host_base, uint64_t seed) const;
  void init_adapters(T* host_adapters, uint64_t seed) const;

  TransformerWorkspace<T> make_workspace(gpu::Ops<T>& ops, int max_batch) const;
  // Values make_workspace allocates for `batch` sequences: the activations a training step keeps and its backward
  // scratch (what a GPU holds for them, at 4 bytes each in fp32).
  size_t workspace_values(int batch) const;

  // Forward and backward of the mean span loss over the batch. `base` and `adapters` are backend memory (adapters
  // may be null without LoRA). With LoRA `grads` receives the adapters' gradient, otherwise the base's (backend
  // memory, trained_param_count() values, overwritten), times numerics.loss_scale. Every stored activation is
  // rounded to numerics.activations and every gradient to numerics.gradients (mixed-precision emulation, as
  // Network does). Returns the unscaled summed loss.
  SpanLoss loss_and_gradient(gpu::Ops<T>& ops, TransformerWorkspace<T>& ws, const T* base, const T* adapters,
                             const SpanBatch& batch, T* grads, const NumericsOptions& numerics = {}) const;
  // Forward only: the summed loss (when the batch has answers) and each sequence's decoded span.
  SpanLoss evaluate(gpu::Ops<T>& ops, TransformerWorkspace<T>& ws, const T* base, const T* adapters,
                    const SpanBatch& batch, std::vector<SpanPrediction>& predictions,
                    gpu::NumberFormat activations = gpu::NumberFormat::Fp32) const;
  // The start and end logits of the last forward, host memory: batch × 2 × seq_len (starts, then ends).
  std::vector<T> last_logits(gpu::Ops<T>& ops, TransformerWorkspace<T>& ws) const;

  // host_base with every adapted W replaced by W + (α/r)·A·B (host memory, base_param_count() values).
  void merge(const T* host_base, const T* host_adapters, T* host_merged) const;

  // FLOPs per sequence of full length (layer.hpp's convention: a multiply-add is 2). Backward leaves out the
  // frozen weights' gradients under LoRA and the embedding's input gradient.
  double forward_flops() const;
  double backward_flops() const;

  int max_answer_tokens = 8;

 private:
  void forward(gpu::Ops<T>& ops, TransformerWorkspace<T>& ws, const T* base, const T* adapters,
               const SpanBatch& batch, gpu::NumberFormat activations) const;
  SpanLoss span_loss(gpu::Ops<T>& ops, TransformerWorkspace<T>& ws, const SpanBatch& batch, bool with_gradient,
                     T grad_scale, std::vector<SpanPrediction>* predictions) const;
  void backward(gpu::Ops<T>& ops, TransformerWorkspace<T>& ws, const T* base, const T* adapters,
                const SpanBatch& batch, T* grads, gpu::NumberFormat gradients) const;

  TransformerConfig config_;
  LoraConfig lora_;
  size_t base_count_ = 0;
  size_t adapter_count_ = 0;
  std::vector<ParamTensor> base_tensors_;
  std::vector<ParamTensor> adapter_tensors_;
  std::vector<size_t> adapter_offsets_;
  // Per block, the base offsets of its kBlockTensors tensors, in the order kBlockTensors describes.
  std::vector<size_t> block_offsets_;
  size_t wte_ = 0, wpe_ = 0, lnf_ = 0, head_ = 0;  // wpe_ is unused with rotary positions
  size_t embedding_tensors_ = 0;                   // wte, and wpe with learned positions
};

// Activations of one forward pass, kept for its backward, sized for up to max_batch sequences.
template <class T>
struct TransformerWorkspace {
  int max_batch = 0;
  int batch = 0;                // of the last forward
  gpu::Buffer<T> ids;           // token ids as values of T
  gpu::Buffer<T> embedded;      // N × dim, the first block's input
  struct Block {
    gpu::Buffer<T> ln1, q, k, v, probs, attn, x_mid, ln2, pre_gelu, gelu, x_out;
    std::vector<gpu::Buffer<T>> lora_hidden;  // h·A per projection (N × rank), empty where not adapted
  };
  std::vector<Block> blocks;
  gpu::Buffer<T> lnf, logits;   // N × dim, N × 2
  std::vector<int32_t> lengths; // of the last forward
  // Backward scratch: N × max(dim, ffn) gradients, the attention's three input gradients, adapter hidden grads.
  gpu::Buffer<T> dx, dx2, dh, dq, dk, dv, dwide, dwide2, dlora, dparam_scratch, dlogits;
};

}  // namespace dtsim::models
