// A workload: the per-layer cost figures of a real training job (ResNet-50, BERT-large, GPT-2 XL, LLaMA),
// generated from an architecture description, not typed by hand. Pure arithmetic: no tensors, no time.
//
// Conventions (docs/workloads.md derives every formula):
// - FLOPs count the matrix products only (a multiply-add is 2 FLOPs): linear layers, convolutions and the two
//   products of attention. Norms, activations, softmax and residual adds are element-wise; their cost is
//   the memory they read and write, which the *_traffic figures count.
// - Per sample: an image for a CNN, a sequence of `tokens_per_sample` tokens for a transformer.
// - Backward: a layer with trainable weights computes the input gradient and the weight gradient (2 × its
//   forward FLOPs); a frozen one (LoRA's base weights) only the input gradient (1 ×); the embedding lookup none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/workload/attention_time.hpp"
#include "models/workload/matmul_time.hpp"

namespace dtsim::models {

// One matrix product of a layer, per sample, and which of its sides grows with the samples of a micro-batch:
// the rows (a linear layer's tokens), the inner dimension (a weight gradient sums over the samples) or the
// count (attention's per-head products, one set per sequence).
struct LayerProduct {
  enum class Grows { Rows, Inner, Count };
  ProductShape per_sample;
  Grows grows = Grows::Rows;
  ProductShape for_samples(double samples) const;
};

struct LayerCost {
  std::string name;  // e.g. "block3.attention.qkv", "layer2.1.conv2"
  std::string kind;  // embedding, linear, attention, norm, activation, conv, batchnorm, pool, add, loss
  int block = -1;    // the transformer block or ResNet stage-block it belongs to (-1: none)
  std::uint64_t parameters = 0;  // every weight, frozen or not
  std::uint64_t trainable = 0;   // weights that get a gradient (what data parallelism sends)
  double forward_flops = 0;      // per sample
  double backward_flops = 0;     // per sample
  // Of backward_flops, forward work done again (FlashAttention's rebuilt scores): executed, but not model FLOPs.
  double rebuilt_in_backward = 0;
  // Activation elements read and written per sample (weights not included: they are read once per step,
  // see `parameters`); at the activations' element size this is the memory traffic of the layer.
  double input_elements = 0;  // per sample: the activation the layer reads (a block's first layer: the block's input)
  double forward_traffic = 0;
  double backward_traffic = 0;
  // What the layer keeps for its backward pass, per sample: elements at the activation precision, dropout
  // masks (1 byte each) and fp32 values whatever the precision (logits for the loss, softmax statistics).
  double saved_elements = 0;
  double saved_mask_bytes = 0;
  double saved_fp32_elements = 0;
  // The products behind forward_flops and backward_flops (the input gradient's, then the weight gradient's),
  // for the shape-aware time of compute.matmul = tiles; empty for element-wise layers and for fused kernels
  // timed by their FLOPs (FlashAttention). Their FLOPs add up to forward_flops and backward_flops.
  std::vector<LayerProduct> forward_products, backward_products;
  // A fused attention kernel's call per sample, which compute.matmul = tiles times from the GPU's attention table
  // (attention_time.hpp) where it has one; heads = 0 for every other layer.
  AttentionShape fused_attention;
  int forward_kernels = 0;   // kernel launches per step (not per sample)
  int backward_kernels = 0;

  // Activation checkpointing rebuilds the layers of blocks (transformer blocks, ResNet bottlenecks) in the
  // backward pass; the layers outside them keep what they save.
  bool recomputed_with_checkpointing() const { return block >= 0; }

  double saved_bytes(double element_bytes) const {
    return saved_elements * element_bytes + saved_mask_bytes + 4.0 * saved_fp32_elements;
  }
};

// Where a published parameter count comes from, to check the generated one against.
struct PublishedCount {
  double value = 0;        // 0: none published
  std::string source;      // URL or paper
  std::string note;        // how it was rounded or counted
};

struct Workload {
  std::string name;       // catalog name, e.g. "llama-7b-lora"
  std::string title;      // e.g. "LLaMA-7B fine-tuned with LoRA r = 16 on q and v"
  std::string family;     // "transformer" or "resnet"
  std::string sample;     // what one sample is: "image" or "sequence"
  int tokens_per_sample = 1;
  std::vector<LayerCost> layers;  // in forward order
  std::vector<std::string> sources;
  PublishedCount published_parameters;

  std::uint64_t parameters() const;
  std::uint64_t trainable() const;
  double forward_flops() const;   // per sample
  double backward_flops() const;  // per sample
  double training_flops() const { return forward_flops() + backward_flops(); }
  // Per sample, the FLOPs the model needs (PaLM's MFU numerator): training_flops less what is computed again
  // (FlashAttention's scores; activation checkpointing's recompute is outside training_flops already).
  // Whether a layer is a fused attention kernel (FlashAttention), timed from a table under compute.matmul = tiles.
  bool has_fused_attention() const;
  double model_flops() const;
  // Bytes kept for the backward pass per sample; with activation checkpointing only every block's input is kept
  // and one block's activations are rebuilt at a time during the backward pass (see docs/workloads.md).
  double saved_bytes(double element_bytes, bool checkpointing = false) const;
  // Forward FLOPs recomputed in the backward pass with activation checkpointing (every block's, per sample).
  double recompute_flops() const;
  // The layers with trainable weights in the order their gradients become ready: the reverse of the forward
  // order, as the backward pass reaches them.
  std::vector<int> gradient_ready_order() const;
};

// For the generators: appends a layer with its name, kind and block, and returns it to be filled in.
LayerCost& append_layer(std::vector<LayerCost>& layers, std::string name, std::string kind, int block);

// For the generators: the softmax cross-entropy over `logits` values per sample. It reads and writes them in
// each pass and keeps them in fp32 for the backward pass (Korthikanti et al. 2022 count 4 s b v bytes).
void append_loss_layer(std::vector<LayerCost>& layers, double logits);

// For the generators' validate(): throws std::invalid_argument("<field> <reason>") unless `ok`; the catalog
// reader turns the field into the file's line.
void require_field(bool ok, const std::string& field, const std::string& reason);

}  // namespace dtsim::models
