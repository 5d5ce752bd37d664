// How the parameter server splits a model over its shards: contiguous runs of whole tensors (the layer-wise
// optimizers need a whole tensor's norm), the largest shard as small as the tensor sizes allow.
#pragma once

#include <cstdint>
#include <vector>

#include "models/layer.hpp"
#include "models/workload/workload.hpp"
#include "sim/strategies/parameters.hpp"

namespace dtsim::sim {

// `tensors` tile [0, total) in order. Returns `shards` non-empty ranges in order that tile it, minimising the
// largest range (ties: the earliest cut). Throws std::invalid_argument when there are fewer tensors than shards.
std::vector<ParameterRange> split_parameters(const std::vector<models::ParamTensor>& tensors, int shards);

// How many of a catalog workload's trained values each shard owns when its trained layers are split the same
// way (timing-only and proxy runs of async-ps). Throws std::invalid_argument with fewer trained layers than
// shards.
std::vector<uint64_t> split_workload_layers(const models::Workload& workload, int shards);

}  // namespace dtsim::sim
