// Layers of a feed-forward network. A layer is stateless: its parameters live in the network's flat
// parameter vector (so that allreduce, optimizers and compressors see one contiguous buffer) and its
// activations live in a per-worker workspace. Every sample is a flat row of input_size() values (images in
// C × H × W order). Convolution and pooling layers are in conv_layers.hpp.
//
// FLOP counts are per sample and follow one convention: a multiply-add counts 2; any other arithmetic
// operation, comparison or elementary-function evaluation (exp, erf, tanh) counts 1; copies and zero fills
// count 0; scalar work done once per row (a layer norm's square root) is not counted.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/ops.hpp"
#include "models/initialization.hpp"
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
  // Biases and normalisation gains and shifts (a layer norm's gamma and beta): the tensors that optimizers
  // conventionally exclude from weight decay.
  bool is_bias = false;
};

template <class T>
class Layer {
 public:
  virtual ~Layer() = default;
  virtual std::string kind() const = 0;
  virtual int input_size() const = 0;
  virtual int output_size() const = 0;
  // True when the input holds integer ids rather than values (an embedding): the network then never rounds
  // it to a narrower number format.
  virtual bool input_is_ids() const { return false; }

  virtual size_t param_count() const { return 0; }
  // The rows of the layer's weight read as a matrix (the shape PowerSGD compresses), its columns being the
  // weight's size / rows; 0 when the weight has no matrix shape (or the layer has no weight).
  virtual size_t weight_rows() const { return 0; }
  virtual std::vector<ParamTensor> param_tensors(const std::string& prefix) const { (void)prefix; return {}; }
  // Writes initial values into this layer's slice (host memory); `scheme` sets the scale of weights and biases
  // (layers whose start is not a fan-in rule, such as a layer norm, ignore it).
  virtual void init_params(T* params, Rng& rng, InitScheme scheme) const {
    (void)params;
    (void)rng;
    (void)scheme;
  }

  // Elements of backend memory that forward and backward may use as scratch for up to `batch` samples. The
  // workspace holds one scratch buffer, shared by all layers: its content does not survive from one call
  // to the next.
  virtual size_t scratch_size(Ops<T>& ops, int batch) const { (void)ops; (void)batch; return 0; }

  // FLOPs per sample (see the convention above). Backward without the input gradient is what the first
  // layer of a network costs.
  virtual double forward_flops() const = 0;
  virtual double backward_flops(bool with_input_grad) const = 0;

  virtual void forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out, T* scratch) const = 0;
  // Writes this layer's parameter gradient into dparams (overwriting it) and, when din.data is not null,
  // the gradient with respect to the input.
  virtual void backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T> out,
                        ConstMatrixView<T> dout, MatrixView<T> din, T* dparams, T* scratch) const = 0;
};

// y = x·W + b with W stored as input×output (row-major) followed by b.
template <class T>
class Dense final : public Layer<T> {
 public:
  Dense(int inputs, int outputs);
  std::string kind() const override { return "dense"; }
  int input_size() const override { return in_; }
  int output_size() const override { return out_; }
  size_t weight_rows() const override { return static_cast<size_t>(in_); }  // inputs × outputs
  size_t param_count() const override { return static_cast<size_t>(in_) * out_ + out_; }
  std::vector<ParamTensor> param_tensors(const std::string& prefix) const override;
  // Weights and biases at the scheme's bounds for fan_in = the input width (models/initialization.hpp).
  void init_params(T* params, Rng& rng, InitScheme scheme) const override;
  double forward_flops() const override;
  double backward_flops(bool with_input_grad) const override;
  void forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out, T* scratch) const override;
  void backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T> out,
                ConstMatrixView<T> dout, MatrixView<T> din, T* dparams, T* scratch) const override;

 private:
  int in_;
  int out_;
};

// An elementwise activation: same size in and out, no parameters.
template <class T>
class Elementwise : public Layer<T> {
 public:
  explicit Elementwise(int size);
  int input_size() const override { return size_; }
  int output_size() const override { return size_; }

 protected:
  size_t count(ConstMatrixView<T> m) const { return static_cast<size_t>(m.rows) * size_; }
  int size_;
};

// max(x, 0): one comparison forward, one select backward.
template <class T>
class Relu final : public Elementwise<T> {
 public:
  using Elementwise<T>::Elementwise;
  std::string kind() const override { return "relu"; }
  double forward_flops() const override { return this->size_; }
  double backward_flops(bool with_input_grad) const override { return with_input_grad ? this->size_ : 0.0; }
  void forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out, T* scratch) const override;
  void backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T> out,
                ConstMatrixView<T> dout, MatrixView<T> din, T* dparams, T* scratch) const override;
};

// x·Φ(x) with the exact Gaussian CDF. Forward: x/√2, erf, +1, ·½, ·x = 5 per element. Backward:
// Φ(x) (4), φ(x) = e^(−x²/2)/√(2π) (x², ·−½, exp, ·1/√(2π): 4), then x·φ, Φ + x·φ, ·dy (3) = 11.
template <class T>
class Gelu final : public Elementwise<T> {
 public:
  using Elementwise<T>::Elementwise;
  std::string kind() const override { return "gelu"; }
  double forward_flops() const override { return 5.0 * this->size_; }
  double backward_flops(bool with_input_grad) const override { return with_input_grad ? 11.0 * this->size_ : 0.0; }
  void forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out, T* scratch) const override;
  void backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T> out,
                ConstMatrixView<T> dout, MatrixView<T> din, T* dparams, T* scratch) const override;
};

// tanh(x): one evaluation forward; dy·(1 − y²) is 3 operations backward.
template <class T>
class Tanh final : public Elementwise<T> {
 public:
  using Elementwise<T>::Elementwise;
  std::string kind() const override { return "tanh"; }
  double forward_flops() const override { return this->size_; }
  double backward_flops(bool with_input_grad) const override { return with_input_grad ? 3.0 * this->size_ : 0.0; }
  void forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out, T* scratch) const override;
  void backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T> out,
                ConstMatrixView<T> dout, MatrixView<T> din, T* dparams, T* scratch) const override;
};

// Normalises each sample's `size` features to zero mean and unit (biased) variance, then applies a learned
// per-feature gain gamma (initialised to 1) and shift beta (initialised to 0), stored gamma then beta.
template <class T>
class LayerNorm final : public Layer<T> {
 public:
  explicit LayerNorm(int size, double eps = 1e-5);
  std::string kind() const override { return "layernorm"; }
  int input_size() const override { return size_; }
  int output_size() const override { return size_; }
  size_t param_count() const override { return 2 * static_cast<size_t>(size_); }
  std::vector<ParamTensor> param_tensors(const std::string& prefix) const override;
  void init_params(T* params, Rng& rng, InitScheme scheme) const override;
  // The op always writes an input gradient; when the caller wants none it goes to scratch.
  size_t scratch_size(Ops<T>& ops, int batch) const override;
  double forward_flops() const override;
  double backward_flops(bool with_input_grad) const override;
  void forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out, T* scratch) const override;
  void backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T> out,
                ConstMatrixView<T> dout, MatrixView<T> din, T* dparams, T* scratch) const override;

 private:
  int size_;
  double eps_;
};

// A lookup table: each sample is `tokens` ids (integral values of T), each replaced by its `dim`-long row
// of a vocab × dim table; an id outside [0, vocab) gives a zero row. The ids are not differentiable: the
// input gradient is zero.
template <class T>
class Embedding final : public Layer<T> {
 public:
  Embedding(int tokens, int vocab, int dim);
  std::string kind() const override { return "embedding"; }
  int input_size() const override { return tokens_; }
  int output_size() const override { return tokens_ * dim_; }
  bool input_is_ids() const override { return true; }
  size_t param_count() const override { return static_cast<size_t>(vocab_) * dim_; }
  size_t weight_rows() const override { return static_cast<size_t>(vocab_); }  // vocab × dim
  std::vector<ParamTensor> param_tensors(const std::string& prefix) const override;
  // Standard normal entries, as torch.nn.Embedding.
  void init_params(T* params, Rng& rng, InitScheme scheme) const override;
  double forward_flops() const override { return 0.0; }  // a gather
  double backward_flops(bool) const override { return static_cast<double>(tokens_) * dim_; }  // scatter-adds
  void forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out, T* scratch) const override;
  void backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T> out,
                ConstMatrixView<T> dout, MatrixView<T> din, T* dparams, T* scratch) const override;

 private:
  int tokens_;
  int vocab_;
  int dim_;
};

}  // namespace dtsim::models
