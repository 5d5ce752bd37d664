// How a network's weights start. Frameworks differ here, and a published federated or large-batch result
// was obtained with its framework's default: matching it is part of matching the protocol.
//
//   he-uniform     weights U(−√(6 / fan_in), +√(6 / fan_in)), biases 0: variance 2 / fan_in, the scale that
//                  keeps a ReLU network's activations the same size from layer to layer (He et al., 2015).
//                  dtsim's default.
//   torch-default  weights and biases U(−1/√fan_in, +1/√fan_in): what PyTorch's nn.Linear and nn.Conv2d
//                  start from when a script does not initialise them itself (kaiming_uniform_ with
//                  a = √5, whose bound works out to 1/√fan_in, and the same bound for the bias). Variance
//                  1 / (3·fan_in): weights 2.45 times smaller than he-uniform's.
//
// fan_in is a dense layer's input width and a convolution's in_channels × kernel height × kernel width.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "models/name_table.hpp"

namespace dtsim::models {

enum class InitScheme { HeUniform, TorchDefault };

const NameTable<InitScheme>& init_scheme_table();  // the one list of the names above
std::vector<std::string> init_scheme_names();      // he-uniform, torch-default
const char* to_string(InitScheme scheme);

// Half-widths of the uniform distributions a layer of `fan_in` inputs draws from; a bound of 0 means the
// tensor starts at zero.
struct UniformInitBounds {
  double weight = 0.0;
  double bias = 0.0;
};
UniformInitBounds uniform_init_bounds(InitScheme scheme, double fan_in);

// A dense or convolution layer's start: `weight_count` weights then `bias_count` biases, drawn (from `rng`, in
// that order) at the bounds of `scheme` for `fan_in`; biases with a zero bound are set to 0 without a draw.
template <class T, class Rng>
void init_weights_and_biases(T* params, size_t weight_count, size_t bias_count, InitScheme scheme, double fan_in,
                             Rng& rng) {
  const UniformInitBounds bound = uniform_init_bounds(scheme, fan_in);
  for (size_t i = 0; i < weight_count; ++i) params[i] = static_cast<T>(rng.uniform(-bound.weight, bound.weight));
  for (size_t j = 0; j < bias_count; ++j)
    params[weight_count + j] = bound.bias > 0 ? static_cast<T>(rng.uniform(-bound.bias, bound.bias)) : T(0);
}

}  // namespace dtsim::models
