// The span transformer in the workload catalog's terms (models/workload/), so that a QA run charges its compute
// with the per-layer roofline and kernel launches of compute_time.hpp, like the built-in networks and `dtsim
// workload`, instead of FLOPs at one efficiency.
#pragma once

#include <vector>

#include "models/objective.hpp"
#include "models/transformer/span_transformer.hpp"
#include "models/workload/workload.hpp"

namespace dtsim::models {

// The layers of one sequence, in forward order, from models/workload/transformer.hpp's generator with the span
// head: the embedding (token table, and the position table with learned positions), per block the attention norm,
// the fused q/k/v projection, attention, o, the MLP norm, up, GELU and down with their residual adds, then the
// final norm, the span head and its loss. FLOPs follow the catalog's convention (matrix products only; the
// element-wise work is memory traffic), the adapters are the model's (rank, targets: `mlp` adapts up and down).
// The trained layers' sizes, in forward order, are the trained vector's tensors in storage order, which the
// tests check tensor by tensor.
Workload span_transformer_workload(const SpanTransformer<float>& model);

// The trained layers of `costs` as gradient segments of the trained vector, in backward order, each carrying its
// share of `backward_flops` (the mini-batch's) in proportion to the layer's backward FLOPs, the work of the loss
// and of the layers without trained values going to the next trained layer the backward pass reaches.
std::vector<GradientSegment> workload_segments(const Workload& costs, double backward_flops);

}  // namespace dtsim::models
