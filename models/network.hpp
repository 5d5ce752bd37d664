// A feed-forward classifier: a sequence of layers ending in logits, trained with softmax cross-entropy.
// The network owns no parameters. Callers pass a flat parameter vector in, which is how one copy serves
// every synchronous worker and how snapshots and per-client models share the same code.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/buffer.hpp"
#include "models/layer.hpp"

namespace dtsim::models {

using gpu::Buffer;
using gpu::LossSums;
using gpu::NumberFormat;

// Activation buffers for one worker, sized for a maximum batch.
template <class T>
struct Workspace {
  int max_batch = 0;
  Buffer<T> input;
  std::vector<Buffer<T>> activations;  // output of each layer
  std::vector<Buffer<T>> gradients;    // d(loss)/d(output of each layer)
  Buffer<T> scratch;                   // shared by all layers, the largest any layer asks for (may be empty)
};

// A workspace for evaluation holds no gradient buffers: half the memory, which matters for the large
// evaluation batches of convolutional networks.
enum class WorkspaceUse { Training, Evaluation };

// Mixed-precision emulation: tensors are computed in T but stored rounded to a narrower format, as a GPU
// storing them in bf16 or fp16 would. With the defaults nothing is rounded or scaled.
struct NumericsOptions {
  NumberFormat activations = NumberFormat::Fp32;  // the input (unless it holds ids) and every layer's output
  NumberFormat gradients = NumberFormat::Fp32;    // every backward output: input gradients and dparams
  // Multiplies the gradient of the loss before the backward pass (so that small fp16 gradients do not
  // flush to zero); the gradients written are loss_scale × the true gradient and the caller unscales them.
  // Must be positive and finite; a power of two keeps the scaling itself exact.
  double loss_scale = 1.0;
};

template <class T>
class Network {
 public:
  Network(std::string description, std::vector<std::unique_ptr<Layer<T>>> layers);

  const std::string& description() const { return description_; }
  int input_size() const { return layers_.front()->input_size(); }
  int num_classes() const { return layers_.back()->output_size(); }
  size_t num_params() const { return num_params_; }
  size_t num_layers() const { return layers_.size(); }
  const Layer<T>& layer(size_t i) const { return *layers_[i]; }
  size_t layer_param_offset(size_t i) const { return offsets_[i]; }
  // Every parameter tensor with its offset in the flat vector, in forward order.
  const std::vector<ParamTensor>& param_tensors() const { return tensors_; }

  // FLOPs per sample of the forward pass (including the loss) and of the backward pass.
  double forward_flops_per_sample() const;
  double backward_flops_per_sample() const;

  // Fills a host vector of num_params() values, seeded, by the network's initialisation scheme.
  void init_params(T* host_params, uint64_t seed) const;
  InitScheme init_scheme() const { return init_scheme_; }
  void set_init_scheme(InitScheme scheme) { init_scheme_ = scheme; }

  Workspace<T> make_workspace(Ops<T>& ops, int max_batch, WorkspaceUse use = WorkspaceUse::Training) const;

  // Forward and backward on a batch of `batch` samples (host memory: features row-major, labels).
  // `grads` (backend memory, num_params values) receives numerics.loss_scale × the gradient of the mean
  // loss over the batch; the returned loss is unscaled. When `input_grads` (backend memory, batch ×
  // input_size values) is not null it receives the gradient with respect to the features, scaled and
  // rounded like the other gradients (this costs the first layer's input gradient, which the FLOP counts
  // leave out).
  LossSums loss_and_gradient(Ops<T>& ops, Workspace<T>& ws, const T* params, const T* host_features,
                             const int32_t* host_labels, int batch, T* grads, const NumericsOptions& numerics = {},
                             T* input_grads = nullptr) const;

  // Forward only, with activations stored in `activations`: summed loss and correct predictions.
  LossSums evaluate(Ops<T>& ops, Workspace<T>& ws, const T* params, const T* host_features,
                    const int32_t* host_labels, int batch, NumberFormat activations = NumberFormat::Fp32) const;

 private:
  void forward(Ops<T>& ops, Workspace<T>& ws, const T* params, const T* host_features, int batch,
               NumberFormat activations) const;

  std::string description_;
  std::vector<std::unique_ptr<Layer<T>>> layers_;
  std::vector<size_t> offsets_;
  std::vector<ParamTensor> tensors_;
  size_t num_params_ = 0;
  InitScheme init_scheme_ = InitScheme::HeUniform;
};

// Multi-layer perceptron: Dense → ReLU → … → Dense(classes). make_network (architectures.hpp) builds the
// other architectures and activations.
template <class T>
std::unique_ptr<Network<T>> make_mlp(int inputs, const std::vector<int>& hidden, int classes);

}  // namespace dtsim::models
