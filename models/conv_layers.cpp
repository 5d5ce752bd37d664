#include "conv_layers.hpp"

#include <cmath>
#include <stdexcept>

namespace dtsim::models {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

std::string describe(ImageShape s) {
  return std::to_string(s.channels) + "x" + std::to_string(s.height) + "x" + std::to_string(s.width);
}

void require_image(ImageShape s, const std::string& layer) {
  require(s.channels > 0 && s.height > 0 && s.width > 0, layer + ": bad input shape " + describe(s));
}

}  // namespace

// ---- Conv2d -------------------------------------------------------------------------------------------------

template <class T>
Conv2d<T>::Conv2d(ImageShape input, int out_channels, int kernel_h, int kernel_w, int stride, int pad)
    : in_(input), kernel_h_(kernel_h), kernel_w_(kernel_w), stride_(stride), pad_(pad) {
  require_image(input, "conv");
  require(out_channels > 0 && kernel_h > 0 && kernel_w > 0 && stride > 0 && pad >= 0,
          "conv: out channels, kernel and stride must be positive and padding non-negative");
  require(input.height + 2 * pad >= kernel_h && input.width + 2 * pad >= kernel_w,
          "conv: a " + std::to_string(kernel_h) + "x" + std::to_string(kernel_w) + " kernel does not fit the " +
              describe(input) + " input with padding " + std::to_string(pad));
  out_.channels = out_channels;
  const gpu::ConvShape s = shape(1);
  out_.height = s.out_h();
  out_.width = s.out_w();
}

template <class T>
gpu::ConvShape Conv2d<T>::shape(int batch) const {
  gpu::ConvShape s;
  s.batch = batch;
  s.in_channels = in_.channels;
  s.height = in_.height;
  s.width = in_.width;
  s.out_channels = out_.channels;
  s.kernel_h = kernel_h_;
  s.kernel_w = kernel_w_;
  s.stride = stride_;
  s.pad = pad_;
  return s;
}

template <class T>
std::vector<ParamTensor> Conv2d<T>::param_tensors(const std::string& prefix) const {
  return {{prefix + ".weight", 0, weight_count(), false},
          {prefix + ".bias", weight_count(), static_cast<size_t>(out_.channels), true}};
}

template <class T>
void Conv2d<T>::init_params(T* params, Rng& rng, InitScheme scheme) const {
  const double fan_in = static_cast<double>(in_.channels) * kernel_h_ * kernel_w_;
  init_weights_and_biases(params, weight_count(), static_cast<size_t>(out_.channels), scheme, fan_in, rng);
}

template <class T>
size_t Conv2d<T>::scratch_size(Ops<T>& ops, int batch) const {
  return ops.conv2d_scratch_size(shape(batch));
}

template <class T>
double Conv2d<T>::forward_flops() const {
  const double positions = static_cast<double>(out_.size());  // output channels × out_h × out_w
  return 2.0 * positions * in_.channels * kernel_h_ * kernel_w_ + positions;
}

template <class T>
double Conv2d<T>::backward_flops(bool with_input_grad) const {
  const double positions = static_cast<double>(out_.size());
  const double sums = 2.0 * positions * in_.channels * kernel_h_ * kernel_w_;
  return sums + positions + (with_input_grad ? sums : 0.0);
}

template <class T>
void Conv2d<T>::forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out, T* scratch) const {
  ops.conv2d_forward(shape(in.rows), in.data, params, params + weight_count(), out.data, scratch);
}

template <class T>
void Conv2d<T>::backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T>,
                         ConstMatrixView<T> dout, MatrixView<T> din, T* dparams, T* scratch) const {
  ops.conv2d_backward(shape(in.rows), in.data, params, dout.data, din.data, dparams, dparams + weight_count(),
                      scratch);
}

// ---- pooling ------------------------------------------------------------------------------------------------

template <class T>
Pool2d<T>::Pool2d(ImageShape input, int kernel, int stride) : in_(input), kernel_(kernel), stride_(stride) {
  require_image(input, "pool");
  require(kernel > 0 && stride > 0, "pool: kernel and stride must be positive");
  require(input.height >= kernel && input.width >= kernel,
          "pool: a " + std::to_string(kernel) + "x" + std::to_string(kernel) + " window does not fit the " +
              describe(input) + " input");
  const gpu::PoolShape s = shape(1);
  out_ = {input.channels, s.out_h(), s.out_w()};
}

template <class T>
gpu::PoolShape Pool2d<T>::shape(int batch) const {
  gpu::PoolShape s;
  s.batch = batch;
  s.channels = in_.channels;
  s.height = in_.height;
  s.width = in_.width;
  s.kernel = kernel_;
  s.stride = stride_;
  return s;
}

template <class T>
void MaxPool2d<T>::forward(Ops<T>& ops, const T*, ConstMatrixView<T> in, MatrixView<T> out, T*) const {
  ops.max_pool_forward(this->shape(in.rows), in.data, out.data);
}

template <class T>
void MaxPool2d<T>::backward(Ops<T>& ops, const T*, ConstMatrixView<T> in, ConstMatrixView<T> out,
                            ConstMatrixView<T> dout, MatrixView<T> din, T*, T*) const {
  if (din.data) ops.max_pool_backward(this->shape(in.rows), in.data, out.data, dout.data, din.data);
}

template <class T>
void AvgPool2d<T>::forward(Ops<T>& ops, const T*, ConstMatrixView<T> in, MatrixView<T> out, T*) const {
  ops.avg_pool_forward(this->shape(in.rows), in.data, out.data);
}

template <class T>
void AvgPool2d<T>::backward(Ops<T>& ops, const T*, ConstMatrixView<T> in, ConstMatrixView<T>,
                            ConstMatrixView<T> dout, MatrixView<T> din, T*, T*) const {
  if (din.data) ops.avg_pool_backward(this->shape(in.rows), dout.data, din.data);
}

template class Conv2d<float>;
template class Conv2d<double>;
template class Pool2d<float>;
template class Pool2d<double>;
template class MaxPool2d<float>;
template class MaxPool2d<double>;
template class AvgPool2d<float>;
template class AvgPool2d<double>;

}  // namespace dtsim::models
