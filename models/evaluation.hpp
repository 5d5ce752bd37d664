// Loss and accuracy of a parameter vector on a whole dataset.
#pragma once

#include "models/dataset.hpp"
#include "models/network.hpp"

namespace dtsim::models {

struct EvalResult {
  double loss = 0.0;      // mean cross-entropy
  double accuracy = 0.0;  // fraction of samples whose arg-max is the label
  int samples = 0;
};

// Runs the forward pass over `data` in chunks of the workspace's batch size, in sample order, with
// activations stored in `activations`.
template <class T>
EvalResult evaluate_dataset(const Network<T>& net, Ops<T>& ops, Workspace<T>& ws, const T* params, const Dataset& data,
                            NumberFormat activations = NumberFormat::Fp32);

}  // namespace dtsim::models
