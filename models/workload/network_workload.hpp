// The per-layer cost figures of a built-in network (models/architectures.hpp) in the workload catalog's terms,
// so that a run charges its compute with the same per-layer roofline and launch overhead as `dtsim workload`
// (compute_time.hpp) instead of FLOPs at one efficiency.
#pragma once

#include <string>

#include "models/network.hpp"
#include "models/workload/workload.hpp"

namespace dtsim::models {

// One LayerCost per layer of `net`, in forward order, then the softmax cross-entropy. The FLOPs are the
// layers' own counts (element-wise ones included, so that without a memory bandwidth or a launch overhead the
// time is exactly the network's FLOPs at the rate); traffic is every activation element a pass reads and
// writes; kernels are what a cuBLAS/cuDNN implementation launches (docs/compute.md lists them).
Workload network_workload(const Network<float>& net, const std::string& name);

}  // namespace dtsim::models
