// Layers of a feed-forward network. A layer is stateless: its parameters live in the network's flat
// parameter vector (so that allreduce, optimizers and compressors see one contiguous buffer) and its
// activations live in a per-worker workspace. Every sample is a flat row of input_size() values.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/ops.hpp"
#include "models/random.hpp"

namespace dtsim::models {

using gpu::ConstMatrixView;
using gpu::MatrixView;
using gpu::Ops;

// One named parameter tensor inside a layer's slice of the flat parameter vector.
struct ParamTensor {
  std::string name;   // e.g. "dense0.weight"
  size_t offset = 0;  // into the flat vector (relative to the layer while the layer reports it)
  size_t size = 0;
  bool is_bias = false;
};

template <class T>
class Layer {
 public:
  virtual ~Layer() = default;
  virtual std::string kind() const = 0;
  virtual int input_size() const = 0;
  virtual int output_size() const = 0;

  virtual size_t param_count() const { return 0; }
  virtual std::vector<ParamTensor> param_tensors(const std::string& prefix) const { (void)prefix; return {}; }
  // Writes initial values into this layer's slice (host memory).
  virtual void init_params(T* params, Rng& rng) const { (void)params; (void)rng; }

  // FLOPs per sample; a multiply-add counts as two. Backward without the input gradient is what the first
  // layer of a network costs.
  virtual double forward_flops() const = 0;
  virtual double backward_flops(bool with_input_grad) const = 0;

  virtual void forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out) const = 0;
  // Writes this layer's parameter gradient into dparams (overwriting it) and, when din.data is not null,
  // the gradient with respect to the input.
  virtual void backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T> out,
                        ConstMatrixView<T> dout, MatrixView<T> din, T* dparams) const = 0;
};

// y = x·W + b with W stored as input×output (row-major) followed by b.
template <class T>
class Dense final : public Layer<T> {
 public:
  Dense(int inputs, int outputs) : in_(inputs), out_(outputs) {}
  std::string kind() const override { return "dense"; }
  int input_size() const override { return in_; }
  int output_size() const override { return out_; }
  size_t param_count() const override { return static_cast<size_t>(in_) * out_ + out_; }
  std::vector<ParamTensor> param_tensors(const std::string& prefix) const override;
  // He (Kaiming) uniform for the weights, suited to ReLU; zero biases.
  void init_params(T* params, Rng& rng) const override;
  double forward_flops() const override;
  double backward_flops(bool with_input_grad) const override;
  void forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out) const override;
  void backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T> out,
                ConstMatrixView<T> dout, MatrixView<T> din, T* dparams) const override;

 private:
  int in_;
  int out_;
};

template <class T>
class Relu final : public Layer<T> {
 public:
  explicit Relu(int size) : size_(size) {}
  std::string kind() const override { return "relu"; }
  int input_size() const override { return size_; }
  int output_size() const override { return size_; }
  double forward_flops() const override { return size_; }
  double backward_flops(bool with_input_grad) const override { return with_input_grad ? size_ : 0.0; }
  void forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out) const override;
  void backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T> out,
                ConstMatrixView<T> dout, MatrixView<T> din, T* dparams) const override;

 private:
  int size_;
};

}  // namespace dtsim::models
