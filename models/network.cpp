#include "network.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/architectures.hpp"

namespace dtsim::models {

template <class T>
Network<T>::Network(std::string description, std::vector<std::unique_ptr<Layer<T>>> layers)
    : description_(std::move(description)), layers_(std::move(layers)) {
  if (layers_.empty()) throw std::invalid_argument("a network needs at least one layer");
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (i > 0 && layers_[i]->input_size() != layers_[i - 1]->output_size())
      throw std::invalid_argument("layer " + std::to_string(i) + " input does not match the previous output");
    offsets_.push_back(num_params_);
    for (ParamTensor t : layers_[i]->param_tensors(layers_[i]->kind() + std::to_string(i))) {
      t.offset += num_params_;
      tensors_.push_back(std::move(t));
    }
    num_params_ += layers_[i]->param_count();
  }
}

template <class T>
double Network<T>::forward_flops_per_sample() const {
  double flops = 0.0;
  for (const auto& l : layers_) flops += l->forward_flops();
  return flops + 4.0 * num_classes();  // softmax: max, exp, sum, divide per class
}

template <class T>
double Network<T>::backward_flops_per_sample() const {
  double flops = 2.0 * num_classes();  // softmax − onehot, scaled
  for (size_t i = 0; i < layers_.size(); ++i) flops += layers_[i]->backward_flops(i > 0);
  return flops;
}

template <class T>
void Network<T>::init_params(T* host_params, uint64_t seed) const {
  for (size_t i = 0; i < layers_.size(); ++i) {
    Rng rng(seed, "init", i);
    layers_[i]->init_params(host_params + offsets_[i], rng, init_scheme_);
  }
}

template <class T>
Workspace<T> Network<T>::make_workspace(Ops<T>& ops, int max_batch, WorkspaceUse use) const {
  Workspace<T> ws;
  ws.max_batch = max_batch;
  ws.input = Buffer<T>(ops, static_cast<size_t>(max_batch) * input_size());
  size_t scratch = 0;
  for (const auto& l : layers_) {
    ws.activations.emplace_back(ops, static_cast<size_t>(max_batch) * l->output_size());
    if (use == WorkspaceUse::Training)
      ws.gradients.emplace_back(ops, static_cast<size_t>(max_batch) * l->output_size());
    scratch = std::max(scratch, l->scratch_size(ops, max_batch));
  }
  if (scratch > 0) ws.scratch = Buffer<T>(ops, scratch);
  return ws;
}

template <class T>
void Network<T>::forward(Ops<T>& ops, Workspace<T>& ws, const T* params, const T* host_features, int batch,
                         NumberFormat activations) const {
  if (batch <= 0 || batch > ws.max_batch) throw std::invalid_argument("batch does not fit the workspace");
  const size_t input_count = static_cast<size_t>(batch) * input_size();
  ops.upload(ws.input.data(), host_features, input_count);
  if (!layers_.front()->input_is_ids()) ops.round_to_format(ws.input.data(), input_count, activations);
  ConstMatrixView<T> in(ws.input.data(), batch, input_size());
  for (size_t i = 0; i < layers_.size(); ++i) {
    MatrixView<T> out{ws.activations[i].data(), batch, layers_[i]->output_size()};
    layers_[i]->forward(ops, params + offsets_[i], in, out, ws.scratch.data());
    ops.round_to_format(out.data, static_cast<size_t>(batch) * out.cols, activations);
    in = out;
  }
}

template <class T>
LossSums Network<T>::loss_and_gradient(Ops<T>& ops, Workspace<T>& ws, const T* params, const T* host_features,
                                       const int32_t* host_labels, int batch, T* grads,
                                       const NumericsOptions& numerics, T* input_grads) const {
  if (ws.gradients.size() != layers_.size()) throw std::invalid_argument("the workspace was made for evaluation only");
  if (!(numerics.loss_scale > 0.0) || !std::isfinite(numerics.loss_scale))
    throw std::invalid_argument("loss_scale must be positive and finite");
  forward(ops, ws, params, host_features, batch, numerics.activations);
  const size_t last = layers_.size() - 1;
  const ConstMatrixView<T> logits(ws.activations[last].data(), batch, num_classes());
  // T(scale) / T(batch) rather than T(scale / batch): with scale 1 this is exactly the unscaled division,
  // and with a power-of-two scale exactly that many times it.
  const T grad_scale = static_cast<T>(numerics.loss_scale) / static_cast<T>(batch);
  const LossSums sums = ops.softmax_cross_entropy(logits, host_labels, ws.gradients[last].data(), grad_scale);
  ops.round_to_format(ws.gradients[last].data(), static_cast<size_t>(batch) * num_classes(), numerics.gradients);
  for (size_t i = layers_.size(); i-- > 0;) {
    const ConstMatrixView<T> in = i == 0 ? ConstMatrixView<T>(ws.input.data(), batch, input_size())
                                         : ConstMatrixView<T>(ws.activations[i - 1].data(), batch,
                                                              layers_[i - 1]->output_size());
    const ConstMatrixView<T> out(ws.activations[i].data(), batch, layers_[i]->output_size());
    const ConstMatrixView<T> dout(ws.gradients[i].data(), batch, layers_[i]->output_size());
    // The first layer's input gradient is only computed (and never charged) when the caller asks for it.
    const MatrixView<T> din = i > 0 ? MatrixView<T>{ws.gradients[i - 1].data(), batch, layers_[i - 1]->output_size()}
                                    : MatrixView<T>{input_grads, input_grads ? batch : 0, input_size()};
    layers_[i]->backward(ops, params + offsets_[i], in, out, dout, din, grads + offsets_[i], ws.scratch.data());
    ops.round_to_format(grads + offsets_[i], layers_[i]->param_count(), numerics.gradients);
    if (din.data) ops.round_to_format(din.data, static_cast<size_t>(batch) * din.cols, numerics.gradients);
  }
  return sums;
}

template <class T>
LossSums Network<T>::evaluate(Ops<T>& ops, Workspace<T>& ws, const T* params, const T* host_features,
                              const int32_t* host_labels, int batch, NumberFormat activations) const {
  forward(ops, ws, params, host_features, batch, activations);
  const ConstMatrixView<T> logits(ws.activations.back().data(), batch, num_classes());
  return ops.softmax_cross_entropy(logits, host_labels, nullptr, T(1));
}

template <class T>
std::unique_ptr<Network<T>> make_mlp(int inputs, const std::vector<int>& hidden, int classes) {
  NetworkSpec spec;
  spec.arch = Architecture::Mlp;
  spec.channels = 1;
  spec.height = 1;
  spec.width = inputs;
  spec.classes = classes;
  spec.hidden = hidden;
  return make_network<T>(spec);
}

template class Network<float>;
template class Network<double>;
template std::unique_ptr<Network<float>> make_mlp<float>(int, const std::vector<int>&, int);
template std::unique_ptr<Network<double>> make_mlp<double>(int, const std::vector<int>&, int);

}  // namespace dtsim::models
