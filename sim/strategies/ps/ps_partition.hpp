// How the parameter server splits a model over its shards: contiguous runs of whole tensors (the layer-wise
// optimizers need a whole tensor's norm), the largest shard as small as the tensor sizes allow.
#pragma once

#include <vector>

#include "models/layer.hpp"
#include "sim/strategies/parameters.hpp"

namespace dtsim::sim {

// `tensors` tile [0, total) in order. Returns `shards` non-empty ranges in order that tile it, minimising the
// largest range (ties: the earliest cut). Throws std::invalid_argument when there are fewer tensors than shards.
std::vector<ParameterRange> split_parameters(const std::vector<models::ParamTensor>& tensors, int shards);

}  // namespace dtsim::sim
