// data.partition = file: the shards of a partition read from a JSON file, so that a run can train on exactly
// the split another framework drew (e.g. analysis/flower_partition.py writes Flower's NIID-Bench split).
//
//   {"shards": [[0, 17, 42, ...], [3, 5, ...], ...]}
//
// Shard k is the list of training-set indices worker k holds, in the order dtsim loads the training set
// (for Fashion-MNIST, the order of train-images-idx3-ubyte, which torchvision's FashionMNIST also keeps).
// Other top-level members (a "source" note, the seed that drew it) are allowed and ignored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dtsim::sim {

// The shards as written. Throws InputError at `path` (and the line where the JSON breaks, when it does) for
// a file that cannot be read, is not JSON, or does not hold a "shards" array of integer arrays; the key
// blamed is data.partition_file.
std::vector<std::vector<int32_t>> read_partition_file(const std::string& path);

}  // namespace dtsim::sim
