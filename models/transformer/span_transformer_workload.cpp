#include "models/transformer/span_transformer_workload.hpp"

#include <stdexcept>
#include <string>

#include "models/workload/transformer.hpp"

namespace dtsim::models {

Workload span_transformer_workload(const SpanTransformer<float>& model) {
  const TransformerConfig& c = model.config();
  TransformerSpec spec;
  spec.layers = c.layers;
  spec.hidden = c.dim;
  spec.heads = c.heads;
  spec.ffn = c.ffn;
  spec.vocab = c.vocab;
  spec.sequence = c.seq_len;
  spec.max_positions = c.positions == PositionEncoding::Learned ? c.seq_len : 0;
  spec.feed_forward = FeedForward::Gelu;
  spec.norm = NormKind::LayerNorm;
  spec.bias = true;
  spec.final_norm = true;
  spec.lm_head = false;
  spec.span_head = true;
  const LoraConfig& lora = model.lora();
  if (lora.enabled()) {
    spec.lora.rank = lora.rank;
    spec.lora.alpha = lora.alpha;
    // The catalog names the attention projections as the model does (q, k, v, o); its MLP ones up and down.
    for (const Projection p : {Projection::Q, Projection::K, Projection::V, Projection::O})
      if (model.adapted(p)) spec.lora.targets.push_back(projection_name(p));
    if (lora.mlp) {
      spec.lora.targets.push_back("up");
      spec.lora.targets.push_back("down");
    }
  }
  Workload w;
  w.name = "span-transformer";
  w.title = model.description();
  w.family = "transformer";
  w.sample = "sequence";
  w.tokens_per_sample = c.seq_len;
  w.layers = transformer_layers(spec);
  if (w.trainable() != model.trained_param_count()) {
    throw std::logic_error("the span transformer's workload trains " + std::to_string(w.trainable()) +
                           " values, the model " + std::to_string(model.trained_param_count()));
  }
  return w;
}

std::vector<GradientSegment> workload_segments(const Workload& costs, double backward_flops) {
  const double total = costs.backward_flops();
  const double scale = total > 0 ? backward_flops / total : 0.0;
  std::vector<GradientSegment> segments;
  size_t end = static_cast<size_t>(costs.trainable());
  double pending = 0;
  for (size_t i = costs.layers.size(); i-- > 0;) {
    const LayerCost& layer = costs.layers[i];
    pending += scale * layer.backward_flops;
    if (layer.trainable == 0) continue;
    end -= static_cast<size_t>(layer.trainable);
    segments.push_back({end, static_cast<size_t>(layer.trainable), pending});
    pending = 0;
  }
  if (!segments.empty()) segments.back().backward_flops += pending;
  return segments;
}

}  // namespace dtsim::models
