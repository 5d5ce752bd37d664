#include "architectures.hpp"

#include <optional>
#include <stdexcept>

#include "models/conv_layers.hpp"

namespace dtsim::models {

const NameTable<Activation>& activation_table() {
  static const NameTable<Activation> table{
      {Activation::Relu, "relu"}, {Activation::Gelu, "gelu"}, {Activation::Tanh, "tanh"}};
  return table;
}

std::vector<std::string> activation_names() { return activation_table().names(); }

const char* to_string(Activation a) { return activation_table().name(a); }

Activation parse_activation(const std::string& text) {
  if (const auto a = activation_table().parse(text)) return *a;
  throw std::invalid_argument("unknown activation '" + text + "' (expected " + activation_table().or_list() + ")");
}

namespace {

template <class T>
class Builder {
 public:
  explicit Builder(Activation activation) : activation_(activation) {}

  // Adds `layer` and returns it, so that the caller can read its output shape.
  template <class L>
  const L& add(std::unique_ptr<L> layer) {
    const L& ref = *layer;
    layers_.push_back(std::move(layer));
    return ref;
  }

  void activation(int size) {
    switch (activation_) {
      case Activation::Relu: add(std::make_unique<Relu<T>>(size)); return;
      case Activation::Gelu: add(std::make_unique<Gelu<T>>(size)); return;
      case Activation::Tanh: add(std::make_unique<Tanh<T>>(size)); return;
    }
    throw std::invalid_argument("unknown activation");
  }

  // conv k×k → activation → maxpool 2; returns the pooled image.
  ImageShape conv_block(ImageShape in, int out_channels, int kernel, int pad) {
    const ImageShape conv = add(std::make_unique<Conv2d<T>>(in, out_channels, kernel, kernel, 1, pad)).output_shape();
    activation(conv.size());
    return add(std::make_unique<MaxPool2d<T>>(conv, 2, 2)).output_shape();
  }

  // Dense layers through `widths`, an activation after each; returns the last width.
  int dense_stack(int in, const std::vector<int>& widths) {
    for (const int w : widths) {
      add(std::make_unique<Dense<T>>(in, w));
      activation(w);
      in = w;
    }
    return in;
  }

  std::unique_ptr<Network<T>> finish(std::string description) {
    return std::make_unique<Network<T>>(std::move(description), std::move(layers_));
  }

 private:
  Activation activation_;
  std::vector<std::unique_ptr<Layer<T>>> layers_;
};

// The spec's architecture, after checking the sizes it is given.
const ArchitectureDescriptor& validate(const NetworkSpec& spec) {
  const ArchitectureDescriptor& architecture = architecture_descriptor(spec.arch);
  const std::string name = architecture.name;
  if (spec.channels <= 0 || spec.height <= 0 || spec.width <= 0 || spec.classes <= 0)
    throw std::invalid_argument("network '" + name + "': channels, height, width and classes must be positive");
  if (!spec.hidden.empty() && !architecture.takes_hidden) {
    std::vector<std::string> takers;
    for (const ArchitectureDescriptor& d : architecture_registry())
      if (d.takes_hidden) takers.push_back(d.name);
    throw std::invalid_argument("network '" + name + "': hidden widths apply to " +
                                join_names(takers, ", ", " and ") + " only");
  }
  for (const int h : spec.hidden)
    if (h <= 0) throw std::invalid_argument("network '" + name + "': hidden widths must be positive");
  if (architecture.span_transformer)
    throw std::invalid_argument("'" + name + "' is not a classifier: it reads token sequences (data.dataset = qa) "
                                "and is built by the QA objective (models/qa/qa_objective.hpp)");
  return architecture;
}

std::string widths(int inputs, const std::vector<int>& hidden, int classes) {
  std::string s = std::to_string(inputs);
  for (const int h : hidden) s += "-" + std::to_string(h);
  return s + "-" + std::to_string(classes);
}

// What follows the image geometry in a description: nothing for ReLU, else " gelu" or " tanh".
std::string activation_suffix(const NetworkSpec& spec) {
  return spec.activation == Activation::Relu ? "" : std::string(" ") + to_string(spec.activation);
}

std::string geometry(const NetworkSpec& spec) {
  return std::to_string(spec.channels) + "x" + std::to_string(spec.height) + "x" + std::to_string(spec.width);
}

// ---- the architectures ------------------------------------------------------------------------------------

template <class T>
std::unique_ptr<Network<T>> build_logreg(const NetworkSpec& spec, const char* name) {
  const ImageShape image{spec.channels, spec.height, spec.width};
  Builder<T> b(spec.activation);
  b.add(std::make_unique<Dense<T>>(image.size(), spec.classes));
  return b.finish(std::string(name) + " " + widths(image.size(), {}, spec.classes));
}

template <class T>
std::unique_ptr<Network<T>> build_mlp(const NetworkSpec& spec, const char* name) {
  const ImageShape image{spec.channels, spec.height, spec.width};
  Builder<T> b(spec.activation);
  b.add(std::make_unique<Dense<T>>(b.dense_stack(image.size(), spec.hidden), spec.classes));
  return b.finish(std::string(name) + " " + widths(image.size(), spec.hidden, spec.classes) + activation_suffix(spec));
}

// `first_padding`: 2 keeps the first convolution's output the input's size (lenet), 0 does not (lenet-nopad).
template <class T>
std::unique_ptr<Network<T>> build_lenet_padded(const NetworkSpec& spec, const char* name, int first_padding) {
  Builder<T> b(spec.activation);
  ImageShape x = b.conv_block({spec.channels, spec.height, spec.width}, 6, 5, first_padding);
  x = b.conv_block(x, 16, 5, 0);
  b.add(std::make_unique<Dense<T>>(b.dense_stack(x.size(), {120, 84}), spec.classes));
  return b.finish(std::string(name) + " " + geometry(spec) + "-" + std::to_string(spec.classes) +
                  activation_suffix(spec));
}

template <class T>
std::unique_ptr<Network<T>> build_lenet(const NetworkSpec& spec, const char* name) {
  return build_lenet_padded<T>(spec, name, 2);
}

template <class T>
std::unique_ptr<Network<T>> build_lenet_nopad(const NetworkSpec& spec, const char* name) {
  return build_lenet_padded<T>(spec, name, 0);
}

template <class T>
std::unique_ptr<Network<T>> build_cnn(const NetworkSpec& spec, const char* name) {
  Builder<T> b(spec.activation);
  ImageShape x = b.conv_block({spec.channels, spec.height, spec.width}, 32, 5, 2);
  x = b.conv_block(x, 64, 5, 2);
  b.add(std::make_unique<Dense<T>>(b.dense_stack(x.size(), {1024}), spec.classes));
  return b.finish(std::string(name) + " " + geometry(spec) + "-" + std::to_string(spec.classes) +
                  activation_suffix(spec));
}

}  // namespace

const std::vector<ArchitectureDescriptor>& architecture_registry() {
  // One line per architecture, in Architecture order: {architecture, name, takes hidden widths, needs images,
  // builders, span transformer}.
  static const std::vector<ArchitectureDescriptor> registry = {
      {Architecture::LogReg, "logreg", false, false, &build_logreg<float>, &build_logreg<double>, false, false},
      {Architecture::Mlp, "mlp", true, false, &build_mlp<float>, &build_mlp<double>},
      {Architecture::LeNet, "lenet", false, true, &build_lenet<float>, &build_lenet<double>},
      {Architecture::Cnn, "cnn", false, true, &build_cnn<float>, &build_cnn<double>},
      {Architecture::LeNetNoPad, "lenet-nopad", false, true, &build_lenet_nopad<float>, &build_lenet_nopad<double>},
      {Architecture::Transformer, "transformer", false, false, nullptr, nullptr, true, false},
  };
  return registry;
}

const ArchitectureDescriptor& architecture_descriptor(Architecture architecture) {
  for (const ArchitectureDescriptor& d : architecture_registry())
    if (d.architecture == architecture) return d;
  throw std::invalid_argument("unknown network architecture");
}

const NameTable<Architecture>& architecture_table() {
  static const NameTable<Architecture> table = [] {
    std::vector<NameTable<Architecture>::Entry> entries;
    for (const ArchitectureDescriptor& d : architecture_registry()) entries.push_back({d.architecture, d.name});
    return NameTable<Architecture>(std::move(entries));
  }();
  return table;
}

std::vector<std::string> architecture_names() { return architecture_table().names(); }

Architecture parse_architecture(const std::string& text) {
  if (const auto a = architecture_table().parse(text)) return *a;
  throw std::invalid_argument("unknown network architecture '" + text + "' (expected " +
                              architecture_table().or_list() + ")");
}

const char* to_string(Architecture architecture) { return architecture_table().name(architecture); }

template <class T>
std::unique_ptr<Network<T>> make_network(const NetworkSpec& spec) {
  const ArchitectureDescriptor& architecture = validate(spec);
  std::unique_ptr<Network<T>> network = architecture.builder<T>()(spec, architecture.name);
  network->set_init_scheme(spec.init);
  return network;
}

template std::unique_ptr<Network<float>> make_network<float>(const NetworkSpec&);
template std::unique_ptr<Network<double>> make_network<double>(const NetworkSpec&);

}  // namespace dtsim::models
