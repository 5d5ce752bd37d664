#include "sim/config/qa_model_config.hpp"

#include <algorithm>

#include "models/name_table.hpp"
#include "sim/config/choice.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/key_builders.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/text.hpp"

namespace dtsim::sim {
namespace {

enum class LoraTarget { Q, K, V, O, Mlp };

const models::NameTable<LoraTarget>& lora_target_table() {
  static const models::NameTable<LoraTarget> table{{LoraTarget::Q, "q"},
                                                   {LoraTarget::K, "k"},
                                                   {LoraTarget::V, "v"},
                                                   {LoraTarget::O, "o"},
                                                   {LoraTarget::Mlp, "mlp"}};
  return table;
}

// "q,v" → the adapted projections; every name once.
void read_targets(const Scenario& s, models::LoraConfig& lora) {
  lora.q = lora.k = lora.v = lora.o = lora.mlp = false;
  const std::string all = s.text("lora.targets");
  std::vector<LoraTarget> seen;
  size_t start = 0;
  while (start <= all.size()) {
    const size_t comma = all.find(',', start);
    const std::string item = trim(all.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    start = comma == std::string::npos ? all.size() + 1 : comma + 1;
    const auto target = lora_target_table().parse(item);
    if (!target) {
      s.fail("lora.targets", "'" + item + "' is not a projection (expected " + lora_target_table().or_list() + ")",
             "list the adapted projections separated by commas, e.g. q,v");
    }
    if (std::find(seen.begin(), seen.end(), *target) != seen.end())
      s.fail("lora.targets", "'" + item + "' is listed twice", "name each projection once");
    seen.push_back(*target);
    switch (*target) {
      case LoraTarget::Q: lora.q = true; break;
      case LoraTarget::K: lora.k = true; break;
      case LoraTarget::V: lora.v = true; break;
      case LoraTarget::O: lora.o = true; break;
      case LoraTarget::Mlp: lora.mlp = true; break;
    }
  }
}

}  // namespace

std::vector<std::string> lora_target_names() { return lora_target_table().names(); }

QaModelConfig make_qa_model_config(const Scenario& s) {
  QaModelConfig c;
  models::TransformerConfig& t = c.transformer;
  t.dim = static_cast<int>(s.integer("transformer.dim"));
  t.heads = static_cast<int>(s.integer("transformer.heads"));
  t.layers = static_cast<int>(s.integer("transformer.layers"));
  t.ffn = static_cast<int>(s.integer("transformer.ffn"));
  t.causal = s.boolean("transformer.causal");
  t.positions = choice_value(models::position_encoding_table(), s, "transformer.positions");
  if (t.dim % t.heads != 0) {
    s.fail("transformer.heads",
           std::to_string(t.heads) + " heads do not divide transformer.dim = " + std::to_string(t.dim),
           "use a number of heads that divides the width, e.g. " + std::to_string(std::max(1, t.dim / 16)));
  }
  if (t.positions == models::PositionEncoding::Rotary && t.head_dim() % 2 != 0) {
    s.fail("transformer.positions",
           "rotary positions turn pairs of values, but each head is transformer.dim / transformer.heads = " +
               std::to_string(t.head_dim()) + " wide, an odd number",
           "choose dim and heads for an even head width, or set transformer.positions = learned");
  }
  c.base_path = s.file_path("transformer.base");
  c.lora.rank = static_cast<int>(s.integer("lora.rank"));
  c.lora.alpha = s.real("lora.alpha");
  read_targets(s, c.lora);
  c.base_format = choice_value(models::weight_format_table(), s, "lora.base_format");
  if (c.lora.enabled()) {
    const int smallest = c.lora.mlp ? std::min(t.dim, t.ffn) : t.dim;
    if (c.lora.rank >= smallest) {
      s.fail("lora.rank",
             "rank " + std::to_string(c.lora.rank) + " is not below the adapted projections' smaller side (" +
                 std::to_string(smallest) + "), so the adapter is not low-rank",
             "use a rank below " + std::to_string(smallest) + " (LoRA's usual 4 to 16)");
    }
  }
  return c;
}

// ---- keys ------------------------------------------------------------------------------------------------
using namespace key_builders;

void add_qa_model_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      integer("transformer.dim", "64", between(1, 65536),
              "Transformer (model.arch = transformer): width of each token"),
      integer("transformer.heads", "4", between(1, 1024), "Transformer: attention heads (must divide transformer.dim)"),
      integer("transformer.layers", "2", between(1, 1024), "Transformer: blocks (attention, then MLP, both pre-norm)"),
      integer("transformer.ffn", "256", between(1, 1048576), "Transformer: hidden width of each block's MLP"),
      boolean("transformer.causal", "false",
              "Transformer: a decoder (each token sees the ones before it) instead of an encoder (every valid token)"),
      choice("transformer.positions", "rotary", models::position_encoding_table().names(),
             "Transformer: how token positions are encoded: rotary (queries and keys turned by a position-dependent "
             "angle, so attention sees offsets between tokens) or learned (a trained vector per position added to the "
             "token embedding)"),
      text("transformer.base", "",
           "Transformer: the model.bin of a run that trained the whole transformer of this shape (output.save_model), "
           "to fine-tune from (a relative path in a scenario file is relative to its folder); empty = initialise "
           "from run.model_seed",
           true),
      integer("lora.rank", "0", between(0, 65536),
              "LoRA adapters' rank r on the transformer: only the adapters train and travel, the base is frozen; "
              "0 = no adapters (the whole transformer trains)"),
      real("lora.alpha", "16", positive(1e6), "LoRA: the adapters' output is scaled by alpha / rank"),
      text("lora.targets", "q,v",
           "LoRA: the adapted projections, comma separated: q, k, v, o (attention) and mlp (both MLP projections)"),
      choice("lora.base_format", "fp32", models::weight_format_names(),
             "LoRA: how the frozen base's projection weights are stored, dequantised on use: fp32, int8 or nf4 "
             "(QLoRA's 4-bit NormalFloat), with one fp32 scale per block of 64"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
