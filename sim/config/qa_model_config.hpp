// The [transformer] and [lora] sections: the span transformer that model.arch = transformer trains on the QA task
// (data.dataset = qa), its LoRA adapters and how its frozen base is stored. Keys and parsing live in
// qa_model_config.cpp.
#pragma once

#include <string>
#include <vector>

#include "models/quantization.hpp"
#include "models/transformer/span_transformer.hpp"

namespace dtsim::sim {

class Scenario;

struct QaModelConfig {
  // dim, heads, layers, ffn and causal from [transformer]; vocab and seq_len come from the data.
  models::TransformerConfig transformer;
  models::LoraConfig lora;
  // transformer.base: a model.bin of a run that trained the whole transformer of the same shape (output.save_model),
  // resolved like a profile path (relative to the scenario's folder when the file sets it); empty: the base is
  // initialised from run.model_seed.
  std::string base_path;
  models::WeightFormat base_format = models::WeightFormat::Fp32;  // lora.base_format
};

// Reads [transformer] and [lora] (and nothing else); throws InputError at the key (heads that do not divide dim, an
// unknown adapter target, a rank no smaller than the projections).
QaModelConfig make_qa_model_config(const Scenario& scenario);

// lora.targets' names: q, k, v, o (the attention projections) and mlp (both MLP projections).
std::vector<std::string> lora_target_names();

}  // namespace dtsim::sim
