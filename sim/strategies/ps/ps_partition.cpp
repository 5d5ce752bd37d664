#include "sim/strategies/ps/ps_partition.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace dtsim::sim {

std::vector<ParameterRange> split_parameters(const std::vector<models::ParamTensor>& tensors, int shards) {
  const size_t t = tensors.size();
  const size_t s = static_cast<size_t>(shards);
  if (shards < 1 || t < s)
    throw std::invalid_argument("cannot split " + std::to_string(t) + " parameter tensors over " +
                                std::to_string(shards) + " shards of whole tensors");
  std::vector<size_t> prefix(t + 1, 0);
  for (size_t i = 0; i < t; ++i) prefix[i + 1] = prefix[i] + tensors[i].size;

  // largest[j][i]: the smallest possible largest shard when the first i tensors form j shards; cut[j][i]: where
  // the last of those shards starts. The linear-partition dynamic programme, O(s·t²): models have few tensors.
  constexpr size_t kImpossible = std::numeric_limits<size_t>::max();
  std::vector<std::vector<size_t>> largest(s + 1, std::vector<size_t>(t + 1, kImpossible));
  std::vector<std::vector<size_t>> cut(s + 1, std::vector<size_t>(t + 1, 0));
  largest[0][0] = 0;
  for (size_t j = 1; j <= s; ++j)
    for (size_t i = j; i <= t; ++i)
      for (size_t k = j - 1; k < i; ++k) {
        if (largest[j - 1][k] == kImpossible) continue;
        const size_t candidate = std::max(largest[j - 1][k], prefix[i] - prefix[k]);
        if (candidate < largest[j][i]) {
          largest[j][i] = candidate;
          cut[j][i] = k;
        }
      }

  std::vector<ParameterRange> ranges(s);
  size_t end = t;
  for (size_t j = s; j >= 1; --j) {
    const size_t begin = cut[j][end];
    ParameterRange& r = ranges[j - 1];
    r.offset = tensors[begin].offset;
    for (size_t i = begin; i < end; ++i) {
      models::ParamTensor rebased = tensors[i];
      rebased.offset -= r.offset;
      r.tensors.push_back(rebased);
      r.size += tensors[i].size;
    }
    end = begin;
  }
  return ranges;
}

std::vector<uint64_t> split_workload_layers(const models::Workload& workload, int shards) {
  std::vector<models::ParamTensor> layers;
  size_t offset = 0;
  for (const models::LayerCost& l : workload.layers) {
    if (l.trainable == 0) continue;
    models::ParamTensor t;
    t.offset = offset;
    t.size = static_cast<size_t>(l.trainable);
    layers.push_back(t);
    offset += t.size;
  }
  std::vector<uint64_t> values;
  for (const ParameterRange& r : split_parameters(layers, shards)) values.push_back(r.size);
  return values;
}

}  // namespace dtsim::sim
