#include "layer.hpp"

#include <cmath>
#include <stdexcept>

namespace dtsim::models {

using gpu::Transpose;

namespace {

void require_positive(int value, const char* what) {
  if (value <= 0) throw std::invalid_argument(std::string(what) + " must be positive, got " + std::to_string(value));
}

}  // namespace

// ---- Dense --------------------------------------------------------------------------------------------------

template <class T>
Dense<T>::Dense(int inputs, int outputs) : in_(inputs), out_(outputs) {
  require_positive(inputs, "dense inputs");
  require_positive(outputs, "dense outputs");
}

template <class T>
std::vector<ParamTensor> Dense<T>::param_tensors(const std::string& prefix) const {
  const size_t weights = static_cast<size_t>(in_) * out_;
  return {{prefix + ".weight", 0, weights, false}, {prefix + ".bias", weights, static_cast<size_t>(out_), true}};
}

template <class T>
void Dense<T>::init_params(T* params, Rng& rng, InitScheme scheme) const {
  init_weights_and_biases(params, static_cast<size_t>(in_) * out_, static_cast<size_t>(out_), scheme, in_, rng);
}

template <class T>
double Dense<T>::forward_flops() const {
  return 2.0 * in_ * out_ + out_;  // GEMM + bias
}

template <class T>
double Dense<T>::backward_flops(bool with_input_grad) const {
  const double weight_grad = 2.0 * in_ * out_ + out_;  // xᵀ·dy and the bias column sums
  return weight_grad + (with_input_grad ? 2.0 * in_ * out_ : 0.0);
}

template <class T>
void Dense<T>::forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out, T* /*scratch*/) const {
  const ConstMatrixView<T> w(params, in_, out_);
  ops.gemm(Transpose::No, Transpose::No, T(1), in, w, T(0), out);
  ops.add_row_vector(out, params + static_cast<size_t>(in_) * out_);
}

template <class T>
void Dense<T>::backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T> /*out*/,
                        ConstMatrixView<T> dout, MatrixView<T> din, T* dparams, T* /*scratch*/) const {
  const size_t weights = static_cast<size_t>(in_) * out_;
  ops.gemm(Transpose::Yes, Transpose::No, T(1), in, dout, T(0), MatrixView<T>{dparams, in_, out_});
  ops.column_sums(dout, T(0), dparams + weights);
  if (din.data) ops.gemm(Transpose::No, Transpose::Yes, T(1), dout, ConstMatrixView<T>(params, in_, out_), T(0), din);
}

// ---- elementwise activations --------------------------------------------------------------------------------

template <class T>
Elementwise<T>::Elementwise(int size) : size_(size) {
  require_positive(size, "activation size");
}

template <class T>
void Relu<T>::forward(Ops<T>& ops, const T*, ConstMatrixView<T> in, MatrixView<T> out, T*) const {
  ops.relu_forward(in.data, out.data, this->count(in));
}

template <class T>
void Relu<T>::backward(Ops<T>& ops, const T*, ConstMatrixView<T>, ConstMatrixView<T> out, ConstMatrixView<T> dout,
                       MatrixView<T> din, T*, T*) const {
  if (din.data) ops.relu_backward(out.data, dout.data, din.data, this->count(out));
}

template <class T>
void Gelu<T>::forward(Ops<T>& ops, const T*, ConstMatrixView<T> in, MatrixView<T> out, T*) const {
  ops.gelu_forward(in.data, out.data, this->count(in));
}

template <class T>
void Gelu<T>::backward(Ops<T>& ops, const T*, ConstMatrixView<T> in, ConstMatrixView<T>, ConstMatrixView<T> dout,
                       MatrixView<T> din, T*, T*) const {
  if (din.data) ops.gelu_backward(in.data, dout.data, din.data, this->count(in));
}

template <class T>
void Tanh<T>::forward(Ops<T>& ops, const T*, ConstMatrixView<T> in, MatrixView<T> out, T*) const {
  ops.tanh_forward(in.data, out.data, this->count(in));
}

template <class T>
void Tanh<T>::backward(Ops<T>& ops, const T*, ConstMatrixView<T>, ConstMatrixView<T> out, ConstMatrixView<T> dout,
                       MatrixView<T> din, T*, T*) const {
  if (din.data) ops.tanh_backward(out.data, dout.data, din.data, this->count(out));
}

// ---- LayerNorm ----------------------------------------------------------------------------------------------

template <class T>
LayerNorm<T>::LayerNorm(int size, double eps) : size_(size), eps_(eps) {
  require_positive(size, "layer norm size");
  if (!(eps > 0.0)) throw std::invalid_argument("layer norm eps must be positive");
}

template <class T>
std::vector<ParamTensor> LayerNorm<T>::param_tensors(const std::string& prefix) const {
  const size_t n = static_cast<size_t>(size_);
  return {{prefix + ".weight", 0, n, true}, {prefix + ".bias", n, n, true}};
}

template <class T>
void LayerNorm<T>::init_params(T* params, Rng&, InitScheme) const {
  for (int j = 0; j < size_; ++j) {
    params[j] = T(1);
    params[size_ + j] = T(0);
  }
}

template <class T>
size_t LayerNorm<T>::scratch_size(Ops<T>&, int batch) const {
  return static_cast<size_t>(batch) * size_;
}

// Forward: mean (n adds), variance ((x − mean)², summed: 3n), then (x − mean)·inv_std·gamma + beta (4n).
template <class T>
double LayerNorm<T>::forward_flops() const {
  return 8.0 * size_;
}

// Backward recomputes the statistics (4n) and x̂ = (x − mean)·inv_std (2n); dgamma += dy·x̂ (2n) and
// dbeta += dy (n). The input gradient adds g = dy·gamma (n), Σg (n), Σg·x̂ (2n) and
// inv_std·(g − mean(g) − x̂·mean(g·x̂)) (4n).
template <class T>
double LayerNorm<T>::backward_flops(bool with_input_grad) const {
  return (9.0 + (with_input_grad ? 8.0 : 0.0)) * size_;
}

template <class T>
void LayerNorm<T>::forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out, T*) const {
  ops.layer_norm_forward(in.data, params, params + size_, out.data, in.rows, size_, static_cast<T>(eps_));
}

template <class T>
void LayerNorm<T>::backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T>,
                            ConstMatrixView<T> dout, MatrixView<T> din, T* dparams, T* scratch) const {
  T* dx = din.data ? din.data : scratch;
  ops.layer_norm_backward(in.data, params, dout.data, dx, dparams, dparams + size_, in.rows, size_,
                          static_cast<T>(eps_));
}

// ---- Embedding ----------------------------------------------------------------------------------------------

template <class T>
Embedding<T>::Embedding(int tokens, int vocab, int dim) : tokens_(tokens), vocab_(vocab), dim_(dim) {
  require_positive(tokens, "embedding tokens");
  require_positive(vocab, "embedding vocabulary");
  require_positive(dim, "embedding dimension");
}

template <class T>
std::vector<ParamTensor> Embedding<T>::param_tensors(const std::string& prefix) const {
  return {{prefix + ".weight", 0, param_count(), false}};
}

template <class T>
void Embedding<T>::init_params(T* params, Rng& rng, InitScheme) const {
  for (size_t i = 0; i < param_count(); ++i) params[i] = static_cast<T>(rng.normal());
}

template <class T>
void Embedding<T>::forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out, T*) const {
  ops.embedding_forward(in.data, params, out.data, in.rows * tokens_, vocab_, dim_);
}

template <class T>
void Embedding<T>::backward(Ops<T>& ops, const T*, ConstMatrixView<T> in, ConstMatrixView<T>,
                            ConstMatrixView<T> dout, MatrixView<T> din, T* dparams, T*) const {
  ops.embedding_backward(in.data, dout.data, dparams, in.rows * tokens_, vocab_, dim_);
  if (din.data) ops.fill(din.data, static_cast<size_t>(din.rows) * tokens_, T(0));
}

template class Dense<float>;
template class Dense<double>;
template class Elementwise<float>;
template class Elementwise<double>;
template class Relu<float>;
template class Relu<double>;
template class Gelu<float>;
template class Gelu<double>;
template class Tanh<float>;
template class Tanh<double>;
template class LayerNorm<float>;
template class LayerNorm<double>;
template class Embedding<float>;
template class Embedding<double>;

}  // namespace dtsim::models
