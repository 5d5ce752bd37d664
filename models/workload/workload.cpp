#include "models/workload/workload.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace dtsim::models {

ProductShape LayerProduct::for_samples(double samples) const {
  ProductShape p = per_sample;
  (grows == Grows::Rows ? p.m : grows == Grows::Inner ? p.k : p.count) *= samples;
  return p;
}

std::uint64_t Workload::parameters() const {
  std::uint64_t n = 0;
  for (const auto& l : layers) n += l.parameters;
  return n;
}

std::uint64_t Workload::trainable() const {
  std::uint64_t n = 0;
  for (const auto& l : layers) n += l.trainable;
  return n;
}

double Workload::forward_flops() const {
  double f = 0;
  for (const auto& l : layers) f += l.forward_flops;
  return f;
}

double Workload::backward_flops() const {
  double f = 0;
  for (const auto& l : layers) f += l.backward_flops;
  return f;
}

bool Workload::has_fused_attention() const {
  for (const LayerCost& l : layers)
    if (l.fused_attention.present()) return true;
  return false;
}

double Workload::model_flops() const {
  double rebuilt = 0;
  for (const auto& l : layers) rebuilt += l.rebuilt_in_backward;
  return training_flops() - rebuilt;
}

double Workload::saved_bytes(double element_bytes, bool checkpointing) const {
  double total = 0;
  if (!checkpointing) {
    for (const auto& l : layers) total += l.saved_bytes(element_bytes);
    return total;
  }
  // Full recomputation per block (Chen et al. 2016; Korthikanti et al. 2022, section 5): each block keeps only
  // its input; in the backward pass one block at a time is run forward again and holds all it saves.
  std::map<int, double> block_saved;
  std::map<int, double> block_input;
  for (const auto& l : layers) {
    if (!l.recomputed_with_checkpointing()) {
      total += l.saved_bytes(element_bytes);
      continue;
    }
    if (!block_input.count(l.block)) block_input[l.block] = l.input_elements * element_bytes;
    block_saved[l.block] += l.saved_bytes(element_bytes);
  }
  double largest = 0;
  for (const auto& [b, bytes] : block_saved) largest = std::max(largest, bytes);
  for (const auto& [b, bytes] : block_input) total += bytes;
  return total + largest;
}

double Workload::recompute_flops() const {
  double f = 0;
  for (const auto& l : layers)
    if (l.recomputed_with_checkpointing()) f += l.forward_flops;
  return f;
}

std::vector<int> Workload::gradient_ready_order() const {
  std::vector<int> order;
  for (int i = static_cast<int>(layers.size()) - 1; i >= 0; --i)
    if (layers[i].trainable > 0) order.push_back(i);
  return order;
}

LayerCost& append_layer(std::vector<LayerCost>& layers, std::string name, std::string kind, int block) {
  LayerCost l;
  l.name = std::move(name);
  l.kind = std::move(kind);
  l.block = block;
  layers.push_back(std::move(l));
  return layers.back();
}

void append_loss_layer(std::vector<LayerCost>& layers, double logits) {
  LayerCost& loss = append_layer(layers, "loss", "loss", -1);
  loss.input_elements = logits;
  loss.forward_traffic = 2 * logits;
  loss.backward_traffic = 2 * logits;
  loss.saved_fp32_elements = logits;
  loss.forward_kernels = 1;
  loss.backward_kernels = 1;
}

void require_field(bool ok, const std::string& field, const std::string& reason) {
  if (!ok) throw std::invalid_argument(field + " " + reason);
}

}  // namespace dtsim::models
