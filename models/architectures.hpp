// The networks dtsim trains, built from a small specification.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/network.hpp"

namespace dtsim::models {

enum class Activation { Relu, Gelu, Tanh };

const char* to_string(Activation a);  // "relu", "gelu", "tanh"

struct NetworkSpec {
  std::string arch;  // "logreg" | "mlp" | "lenet" | "cnn"
  int channels = 1, height = 28, width = 28, classes = 10;
  std::vector<int> hidden;  // mlp only: the hidden layers' widths
  // Every hidden activation of mlp, lenet and cnn (logreg has none); the architectures below are described
  // with the default, ReLU.
  Activation activation = Activation::Relu;
};

// Input is the flat per-sample row of channels × height × width values (NCHW):
// - logreg: Dense(features → classes).
// - mlp:    Dense → activation → … → Dense(classes), one Dense per hidden width.
// - lenet:  conv 6@5×5 pad 2 → ReLU → maxpool 2 → conv 16@5×5 → ReLU → maxpool 2 → FC 120 → ReLU → FC 84 →
//           ReLU → FC classes (LeCun et al. 1998, with ReLU and max pooling).
// - cnn:    conv 32@5×5 pad 2 → ReLU → maxpool 2 → conv 64@5×5 pad 2 → ReLU → maxpool 2 → FC 1024 → ReLU →
//           FC classes (the CNN of McMahan et al. 2017, "Communication-Efficient Learning of Deep Networks
//           from Decentralized Data").
// Throws std::invalid_argument for an unknown architecture, non-positive sizes, hidden widths given to an
// architecture other than mlp (they would be ignored), or an image too small for the convolutions.
template <class T>
std::unique_ptr<Network<T>> make_network(const NetworkSpec& spec);

}  // namespace dtsim::models
