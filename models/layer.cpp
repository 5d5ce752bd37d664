#include "layer.hpp"

#include <cmath>

namespace dtsim::models {

using gpu::Transpose;

template <class T>
std::vector<ParamTensor> Dense<T>::param_tensors(const std::string& prefix) const {
  const size_t weights = static_cast<size_t>(in_) * out_;
  return {{prefix + ".weight", 0, weights, false}, {prefix + ".bias", weights, static_cast<size_t>(out_), true}};
}

template <class T>
void Dense<T>::init_params(T* params, Rng& rng) const {
  const double bound = std::sqrt(6.0 / in_);
  const size_t weights = static_cast<size_t>(in_) * out_;
  for (size_t i = 0; i < weights; ++i) params[i] = static_cast<T>(rng.uniform(-bound, bound));
  for (int j = 0; j < out_; ++j) params[weights + j] = T(0);
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
void Dense<T>::forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out) const {
  const ConstMatrixView<T> w(params, in_, out_);
  ops.gemm(Transpose::No, Transpose::No, T(1), in, w, T(0), out);
  ops.add_row_vector(out, params + static_cast<size_t>(in_) * out_);
}

template <class T>
void Dense<T>::backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T> /*out*/,
                        ConstMatrixView<T> dout, MatrixView<T> din, T* dparams) const {
  const size_t weights = static_cast<size_t>(in_) * out_;
  ops.gemm(Transpose::Yes, Transpose::No, T(1), in, dout, T(0), MatrixView<T>{dparams, in_, out_});
  ops.column_sums(dout, T(0), dparams + weights);
  if (din.data) ops.gemm(Transpose::No, Transpose::Yes, T(1), dout, ConstMatrixView<T>(params, in_, out_), T(0), din);
}

template <class T>
void Relu<T>::forward(Ops<T>& ops, const T* /*params*/, ConstMatrixView<T> in, MatrixView<T> out) const {
  ops.relu_forward(in.data, out.data, static_cast<size_t>(in.rows) * size_);
}

template <class T>
void Relu<T>::backward(Ops<T>& ops, const T* /*params*/, ConstMatrixView<T> /*in*/, ConstMatrixView<T> out,
                       ConstMatrixView<T> dout, MatrixView<T> din, T* /*dparams*/) const {
  if (din.data) ops.relu_backward(out.data, dout.data, din.data, static_cast<size_t>(out.rows) * size_);
}

template class Dense<float>;
template class Dense<double>;
template class Relu<float>;
template class Relu<double>;

}  // namespace dtsim::models
