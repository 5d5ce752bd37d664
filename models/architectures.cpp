#include "architectures.hpp"

#include <stdexcept>

#include "models/conv_layers.hpp"

namespace dtsim::models {

const char* to_string(Activation a) {
  switch (a) {
    case Activation::Relu: return "relu";
    case Activation::Gelu: return "gelu";
    case Activation::Tanh: return "tanh";
  }
  return "?";
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

void validate(const NetworkSpec& spec) {
  if (spec.channels <= 0 || spec.height <= 0 || spec.width <= 0 || spec.classes <= 0)
    throw std::invalid_argument("network '" + spec.arch + "': channels, height, width and classes must be positive");
  if (spec.arch != "mlp" && !spec.hidden.empty())
    throw std::invalid_argument("network '" + spec.arch + "': hidden widths apply to mlp only");
  for (const int h : spec.hidden)
    if (h <= 0) throw std::invalid_argument("network 'mlp': hidden widths must be positive");
}

std::string widths(int inputs, const std::vector<int>& hidden, int classes) {
  std::string s = std::to_string(inputs);
  for (const int h : hidden) s += "-" + std::to_string(h);
  return s + "-" + std::to_string(classes);
}

}  // namespace

template <class T>
std::unique_ptr<Network<T>> make_network(const NetworkSpec& spec) {
  validate(spec);
  const ImageShape image{spec.channels, spec.height, spec.width};
  const std::string suffix = spec.activation == Activation::Relu ? "" : std::string(" ") + to_string(spec.activation);
  const std::string geometry =
      std::to_string(spec.channels) + "x" + std::to_string(spec.height) + "x" + std::to_string(spec.width);
  Builder<T> b(spec.activation);
  if (spec.arch == "logreg") {
    b.add(std::make_unique<Dense<T>>(image.size(), spec.classes));
    return b.finish("logreg " + widths(image.size(), {}, spec.classes));
  }
  if (spec.arch == "mlp") {
    b.add(std::make_unique<Dense<T>>(b.dense_stack(image.size(), spec.hidden), spec.classes));
    return b.finish("mlp " + widths(image.size(), spec.hidden, spec.classes) + suffix);
  }
  if (spec.arch == "lenet") {
    ImageShape x = b.conv_block(image, 6, 5, 2);
    x = b.conv_block(x, 16, 5, 0);
    b.add(std::make_unique<Dense<T>>(b.dense_stack(x.size(), {120, 84}), spec.classes));
    return b.finish("lenet " + geometry + "-" + std::to_string(spec.classes) + suffix);
  }
  if (spec.arch == "cnn") {
    ImageShape x = b.conv_block(image, 32, 5, 2);
    x = b.conv_block(x, 64, 5, 2);
    b.add(std::make_unique<Dense<T>>(b.dense_stack(x.size(), {1024}), spec.classes));
    return b.finish("cnn " + geometry + "-" + std::to_string(spec.classes) + suffix);
  }
  throw std::invalid_argument("unknown network architecture '" + spec.arch + "' (expected logreg, mlp, lenet or cnn)");
}

template std::unique_ptr<Network<float>> make_network<float>(const NetworkSpec&);
template std::unique_ptr<Network<double>> make_network<double>(const NetworkSpec&);

}  // namespace dtsim::models
