// The networks dtsim trains, built from a small specification.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/name_table.hpp"
#include "models/network.hpp"

namespace dtsim::models {

enum class Activation { Relu, Gelu, Tanh };

const char* to_string(Activation a);  // "relu", "gelu", "tanh"
// Throws std::invalid_argument naming the accepted values.
Activation parse_activation(const std::string& text);
const NameTable<Activation>& activation_table();  // the one list of the names above
std::vector<std::string> activation_names();      // relu, gelu, tanh

enum class Architecture { LogReg, Mlp, LeNet, Cnn, LeNetNoPad, Transformer };

// "logreg" | "mlp" | "lenet" | "cnn" | "lenet-nopad" | "transformer"; throws std::invalid_argument naming the
// accepted values.
Architecture parse_architecture(const std::string& text);
const char* to_string(Architecture architecture);

struct NetworkSpec {
  Architecture arch = Architecture::Mlp;
  int channels = 1, height = 28, width = 28, classes = 10;
  std::vector<int> hidden;  // mlp only: the hidden layers' widths
  // Every hidden activation of mlp, lenet and cnn (logreg has none); the architectures below are described
  // with the default, ReLU.
  Activation activation = Activation::Relu;
  InitScheme init = InitScheme::HeUniform;  // how the weights start (models/initialization.hpp)
};

// Input is the flat per-sample row of channels × height × width values (NCHW):
// - logreg: Dense(features → classes).
// - mlp:    Dense → activation → … → Dense(classes), one Dense per hidden width.
// - lenet:  conv 6@5×5 pad 2 → ReLU → maxpool 2 → conv 16@5×5 → ReLU → maxpool 2 → FC 120 → ReLU → FC 84 →
//           ReLU → FC classes (LeCun et al. 1998, with ReLU and max pooling).
// - lenet-nopad: the same without the first convolution's padding (28×28 → 24×24 → 12×12 → 8×8 → 4×4, so
//           FC 256 → 120): the LeNet of federated benchmarks (e.g. NIID-Bench's "simple-cnn"), 44,426 parameters
//           on Fashion-MNIST against lenet's 61,706.
// - transformer: not a Network: the span transformer of models/transformer/span_transformer.hpp, which reads token
//           sequences (the QA task) and is built by the QA objective; make_network refuses it.
// - cnn:    conv 32@5×5 pad 2 → ReLU → maxpool 2 → conv 64@5×5 pad 2 → ReLU → maxpool 2 → FC 1024 → ReLU →
//           FC classes (the CNN of McMahan et al. 2017, "Communication-Efficient Learning of Deep Networks
//           from Decentralized Data").
// Throws std::invalid_argument for an Architecture without a descriptor, non-positive sizes, hidden widths given to an
// architecture other than mlp (they would be ignored), or an image too small for the convolutions.
template <class T>
std::unique_ptr<Network<T>> make_network(const NetworkSpec& spec);

// Builds the network of a spec that validation has accepted; the description starts with `name`.
template <class T>
using NetworkBuilder = std::unique_ptr<Network<T>> (*)(const NetworkSpec& spec, const char* name);

// One descriptor per architecture: its name (the one place Architecture's names are written), what input
// and options it takes, and its builder. make_network() dispatches through it.
struct ArchitectureDescriptor {
  Architecture architecture;
  const char* name;  // as parse_architecture accepts it
  bool takes_hidden;  // NetworkSpec::hidden (the hidden widths) applies; any other architecture refuses them
  // Convolutions over a channels × height × width image (such as Fashion-MNIST's 1 × 28 × 28): the input must
  // be an image dataset, not flat feature vectors (the synthetic dataset's 60 features cannot be convolved).
  bool needs_images;
  NetworkBuilder<float> build_float;
  NetworkBuilder<double> build_double;
  // The span transformer: no Network builder (the builders are null); it trains on token sequences (data.dataset =
  // qa) through models::QaObjective.
  bool span_transformer = false;
  // NetworkSpec::activation applies: the architecture has hidden layers built with it (logreg has none; the
  // transformer's MLP is always GELU).
  bool takes_activation = true;

  template <class T>
  NetworkBuilder<T> builder() const;
};

template <>
inline NetworkBuilder<float> ArchitectureDescriptor::builder<float>() const { return build_float; }
template <>
inline NetworkBuilder<double> ArchitectureDescriptor::builder<double>() const { return build_double; }

// Every architecture, one descriptor per Architecture, in Architecture order (the order of the choices).
const std::vector<ArchitectureDescriptor>& architecture_registry();
// The descriptor of `architecture`; throws std::invalid_argument for a value outside the enum.
const ArchitectureDescriptor& architecture_descriptor(Architecture architecture);
// The one table of Architecture's names (built from the registry), and the choices list.
const NameTable<Architecture>& architecture_table();
std::vector<std::string> architecture_names();  // logreg, mlp, lenet, cnn, lenet-nopad, transformer

}  // namespace dtsim::models
