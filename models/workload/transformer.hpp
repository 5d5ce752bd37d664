// Transformer workloads (BERT, GPT-2, LLaMA) from their hyper-parameters, optionally with LoRA adapters.
#pragma once

#include <string>
#include <vector>

#include "models/workload/workload.hpp"

namespace dtsim::models {

enum class FeedForward { Gelu, SwiGlu };  // two matrices with GELU; gate, up and down matrices with SwiGLU
enum class NormKind { LayerNorm, RmsNorm };  // weight and bias; weight only

struct LoraSpec {
  int rank = 0;  // 0: no adapters, every weight trains
  double alpha = 0;
  // Projections that get an adapter: any of q, k, v, o (attention) and up, gate, down (feed-forward).
  std::vector<std::string> targets;
};

struct TransformerSpec {
  int layers = 0, hidden = 0, heads = 0;
  int kv_heads = 0;       // 0: as many as heads (grouped-query attention when fewer)
  int ffn = 0;            // inner width of the feed-forward block
  int vocab = 0;
  int sequence = 0;       // tokens per sample
  int max_positions = 0;  // learned position embeddings (0: rotary, no table)
  int token_types = 0;    // BERT's segment embeddings (0: none)
  FeedForward feed_forward = FeedForward::Gelu;
  NormKind norm = NormKind::LayerNorm;
  bool bias = true;              // linear layers carry biases
  bool embedding_norm = false;   // a norm right after the embeddings (BERT)
  bool final_norm = true;        // a norm after the last block (GPT-2, LLaMA)
  bool lm_head = true;           // an output projection to the vocabulary, with a cross-entropy over it
  bool span_head = false;        // extractive QA's head instead: a start and an end logit per token (BERT on
                                 // SQuAD), with a cross-entropy over the positions for each
  bool tied_embeddings = false;  // the output projection reuses the token embedding
  bool head_transform = false;   // BERT's masked-LM transform before the output projection: dense, GELU, norm
  bool head_bias = false;        // the output projection has a bias per vocabulary entry (BERT)
  bool pooler = false;           // BERT's pooler: dense hidden → hidden with tanh on the first token
  int pooler_classes = 0;        // a classifier on the pooled token (BERT's next-sentence head: 2); 0: none
  bool dropout = false;          // dropout layers, whose masks are kept for the backward pass
  bool flash_attention = false;  // attention scores never stored (FlashAttention); else softmax kept
  // Each token attends to those before it only (a decoder: GPT, LLaMA). A fused kernel then skips the masked
  // half of the scores; the FLOPs counted stay the full products', as model FLOPs utilisation counts them.
  bool causal = false;
  LoraSpec lora;
};

// Throws std::invalid_argument naming the field for a spec that cannot describe a transformer.
void validate(const TransformerSpec& spec);

// The layers in forward order (embedding, per block: norm, q/k/v, attention, o, norm, feed-forward,
// then the final norm, the head and the loss), with the figures of docs/workloads.md.
std::vector<LayerCost> transformer_layers(const TransformerSpec& spec);

}  // namespace dtsim::models
