#include "models/workload/network_workload.hpp"

namespace dtsim::models {
namespace {

struct Kernels {
  int forward = 1, backward = 1;
};

// Launches per pass by layer kind. A dense or convolution layer runs its product and a bias add forward;
// backward, the weight-gradient product, the bias-gradient reduction and (except for the first layer, which
// needs no input gradient) the input-gradient product. A layer norm's backward adds the reduction for its gain
// and shift. Everything else is one element-wise or pooling kernel each way.
Kernels kernels_of(const std::string& kind, bool with_input_grad) {
  if (kind == "dense" || kind == "conv") return {2, with_input_grad ? 3 : 2};
  if (kind == "layernorm") return {1, with_input_grad ? 2 : 1};
  return {1, 1};
}

// The catalog's kind for a built-in layer's (workload.hpp lists them).
std::string kind_of(const std::string& kind) {
  if (kind == "dense") return "linear";
  if (kind == "layernorm") return "norm";
  if (kind == "maxpool" || kind == "avgpool") return "pool";
  if (kind == "relu" || kind == "gelu" || kind == "tanh") return "activation";
  return kind;  // conv, embedding
}

}  // namespace

Workload network_workload(const Network<float>& net, const std::string& name) {
  Workload w;
  w.name = name;
  w.title = net.description();
  w.family = "built-in";
  w.sample = "sample";
  double layer_forward = 0, layer_backward = 0;
  for (size_t i = 0; i < net.num_layers(); ++i) {
    const Layer<float>& layer = net.layer(i);
    const bool input_grad = i > 0;
    LayerCost& c = append_layer(w.layers, layer.kind() + std::to_string(i), kind_of(layer.kind()), -1);
    const double in = layer.input_size(), out = layer.output_size();
    c.parameters = c.trainable = layer.param_count();
    c.forward_flops = layer.forward_flops();
    c.backward_flops = layer.backward_flops(input_grad);
    c.input_elements = in;
    c.forward_traffic = in + out;
    // Backward reads the output gradient and the input (for the weight gradient, or the element-wise
    // derivative) and writes the input gradient.
    c.backward_traffic = out + in + (input_grad ? in : 0);
    c.saved_elements = in;
    const Kernels k = kernels_of(layer.kind(), input_grad);
    c.forward_kernels = k.forward;
    c.backward_kernels = k.backward;
    layer_forward += c.forward_flops;
    layer_backward += c.backward_flops;
  }
  append_loss_layer(w.layers, net.num_classes());
  // The softmax and its gradient, as Network counts them.
  w.layers.back().forward_flops = net.forward_flops_per_sample() - layer_forward;
  w.layers.back().backward_flops = net.backward_flops_per_sample() - layer_backward;
  return w;
}

}  // namespace dtsim::models
