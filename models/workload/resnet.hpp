// ResNet workloads (He et al. 2016, torchvision's v1.5: the stride on the 3 × 3 convolution of a bottleneck)
// expanded from their stage table into a layer table of convolutions, batch norms, ReLUs, pools and adds.
#pragma once

#include <vector>

#include "models/workload/workload.hpp"

namespace dtsim::models {

struct ResNetStage {
  int blocks = 0;  // bottleneck blocks
  int width = 0;   // channels of the 1 × 1 and 3 × 3 convolutions; the block's output is width × expansion
  int stride = 1;  // of the stage's first block
};

struct ResNetSpec {
  int image = 224;        // square input, height = width
  int channels = 3;
  int stem_width = 64;    // 7 × 7 stride-2 convolution, then a 3 × 3 stride-2 max pool
  int expansion = 4;
  std::vector<ResNetStage> stages;
  int classes = 1000;
};

// Throws std::invalid_argument naming the field of a spec that cannot describe a ResNet.
void validate(const ResNetSpec& spec);

std::vector<LayerCost> resnet_layers(const ResNetSpec& spec);

}  // namespace dtsim::models
