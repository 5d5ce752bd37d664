// The span transformer's per-layer cost table: its trained layers line up with the trained vector's tensors (so
// that a gradient segment is a whole layer's gradient), its matrix FLOPs follow their closed form, and the gradient
// segments cover the trained vector last layer first.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "models/transformer/span_transformer.hpp"
#include "models/transformer/span_transformer_workload.hpp"
#include "models/workload/transformer.hpp"

namespace dtsim::models {
namespace {

TransformerConfig shape(PositionEncoding positions) {
  TransformerConfig c;
  c.vocab = 221, c.seq_len = 48, c.dim = 64, c.heads = 4, c.layers = 2, c.ffn = 256;
  c.positions = positions;
  return c;
}

LoraConfig lora(int rank, bool mlp) {
  LoraConfig l;
  l.rank = rank;
  l.q = l.v = true;
  l.k = l.o = mlp;  // the widest case adapts everything
  l.mlp = mlp;
  return l;
}

struct Case {
  PositionEncoding positions;
  LoraConfig lora;
};

const std::vector<Case> kCases = {{PositionEncoding::Rotary, {}},
                                  {PositionEncoding::Learned, {}},
                                  {PositionEncoding::Rotary, lora(8, false)},
                                  {PositionEncoding::Learned, lora(4, true)}};

TEST(SpanTransformerWorkload, TrainedLayersAreRunsOfTheTrainedTensors) {
  for (const Case& c : kCases) {
    const SpanTransformer<float> model(shape(c.positions), c.lora);
    const Workload w = span_transformer_workload(model);
    const std::vector<ParamTensor>& tensors = c.lora.enabled() ? model.adapter_tensors() : model.base_tensors();
    EXPECT_EQ(w.trainable(), model.trained_param_count());
    EXPECT_EQ(w.parameters(), model.base_param_count() + model.adapter_param_count());
    // Walk the tensors in storage order; every trained layer must end exactly on a tensor boundary.
    size_t t = 0;
    for (const LayerCost& layer : w.layers) {
      if (layer.trainable == 0) continue;
      size_t covered = 0;
      std::string names;
      while (covered < layer.trainable && t < tensors.size()) {
        covered += tensors[t].size;
        names += tensors[t++].name + " ";
      }
      EXPECT_EQ(covered, layer.trainable) << layer.name << " against " << names;
    }
    EXPECT_EQ(t, tensors.size());
  }
}

TEST(SpanTransformerWorkload, MatrixFlopsFollowTheirClosedForm) {
  // Per sequence of S tokens: the q, k, v, o projections 2·S·4d², the MLP 2·S·2df, attention's two products
  // 4·S²·d per block; the span head 2·S·2d. Adapters of rank r add 2·S·r(in + out) forward and twice that backward.
  const double S = 48, d = 64, f = 256, L = 2, r = 8;
  const double base_forward = L * (2 * S * 4 * d * d + 2 * S * 2 * d * f + 4 * S * S * d) + 2 * S * 2 * d;
  const SpanTransformer<float> full(shape(PositionEncoding::Rotary), {});
  const Workload wf = span_transformer_workload(full);
  EXPECT_DOUBLE_EQ(wf.forward_flops(), base_forward);
  EXPECT_DOUBLE_EQ(wf.backward_flops(), 2 * base_forward);  // every weight trains: input and weight gradients
  const SpanTransformer<float> adapted(shape(PositionEncoding::Rotary), lora(8, false));
  const Workload wa = span_transformer_workload(adapted);
  const double adapters = L * 2 * 2 * S * r * (d + d);  // q and v
  EXPECT_DOUBLE_EQ(wa.forward_flops(), base_forward + adapters);
  // Frozen weights: input gradients only; attention has no weights and still needs both operands' gradients.
  const double attention = L * 4 * S * S * d;
  EXPECT_DOUBLE_EQ(wa.backward_flops(), base_forward + attention + 2 * adapters);
  // The model's own count adds the element-wise work on top: within 10 % of the matrix products here.
  EXPECT_GT(full.forward_flops(), wf.forward_flops());
  EXPECT_LT(full.forward_flops(), 1.1 * wf.forward_flops());
}

TEST(SpanTransformerWorkload, SegmentsCoverTheTrainedVectorLastLayerFirst) {
  for (const Case& c : kCases) {
    const SpanTransformer<float> model(shape(c.positions), c.lora);
    const Workload w = span_transformer_workload(model);
    const double total = 1e9;
    const std::vector<GradientSegment> segments = workload_segments(w, total);
    size_t trained_layers = 0;
    for (const LayerCost& l : w.layers) trained_layers += l.trainable > 0 ? 1 : 0;
    ASSERT_EQ(segments.size(), trained_layers);
    size_t end = model.trained_param_count();
    double flops = 0;
    for (const GradientSegment& s : segments) {
      EXPECT_EQ(s.offset + s.size, end);
      end = s.offset;
      flops += s.backward_flops;
      EXPECT_GE(s.backward_flops, 0.0);
    }
    EXPECT_EQ(end, 0u);
    EXPECT_NEAR(flops, total, 1e-6 * total);
  }
}

TEST(SpanTransformerWorkload, TheSpanHeadIsAHeadOfItsOwn) {
  TransformerSpec spec;
  spec.layers = 1, spec.hidden = 8, spec.heads = 2, spec.ffn = 16, spec.vocab = 10, spec.sequence = 4;
  spec.lm_head = false, spec.span_head = true;
  const std::vector<LayerCost> layers = transformer_layers(spec);
  ASSERT_GE(layers.size(), 2u);
  EXPECT_EQ(layers[layers.size() - 2].name, "head.span");
  EXPECT_EQ(layers[layers.size() - 2].parameters, 8u * 2 + 2);
  EXPECT_EQ(layers.back().kind, "loss");
  spec.lm_head = true;
  EXPECT_THROW(transformer_layers(spec), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::models
