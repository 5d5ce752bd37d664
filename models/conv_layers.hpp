// Convolution and pooling layers over images stored as flat C × H × W rows (NCHW for a batch).
#pragma once

#include <string>
#include <vector>

#include "models/layer.hpp"

namespace dtsim::models {

struct ImageShape {
  int channels = 1;
  int height = 1;
  int width = 1;
  int size() const { return channels * height * width; }
};

// A 2-D convolution with zero padding `pad` on every side. Parameters: the kernel, out_channels ×
// channels × kernel_h × kernel_w, then one bias per output channel.
template <class T>
class Conv2d final : public Layer<T> {
 public:
  Conv2d(ImageShape input, int out_channels, int kernel_h, int kernel_w, int stride = 1, int pad = 0);
  std::string kind() const override { return "conv"; }
  int input_size() const override { return in_.size(); }
  int output_size() const override { return out_.size(); }
  ImageShape output_shape() const { return out_; }
  size_t param_count() const override { return weight_count() + out_.channels; }
  // out_channels × (in_channels · kernel_h · kernel_w)
  size_t weight_rows() const override { return static_cast<size_t>(out_.channels); }
  std::vector<ParamTensor> param_tensors(const std::string& prefix) const override;
  // Weights and biases at the scheme's bounds for fan_in = channels · kernel_h · kernel_w.
  void init_params(T* params, Rng& rng, InitScheme scheme) const override;
  size_t scratch_size(Ops<T>& ops, int batch) const override;
  // Per output position and output channel: a patch_size-long multiply-add sum and a bias add. Backward:
  // the same sum for the kernel gradient, a bias-gradient add, and (for the input gradient) the same sum
  // again.
  double forward_flops() const override;
  double backward_flops(bool with_input_grad) const override;
  void forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out, T* scratch) const override;
  void backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T> out,
                ConstMatrixView<T> dout, MatrixView<T> din, T* dparams, T* scratch) const override;

 private:
  gpu::ConvShape shape(int batch) const;
  size_t weight_count() const { return static_cast<size_t>(out_.channels) * in_.channels * kernel_h_ * kernel_w_; }

  ImageShape in_;
  ImageShape out_;
  int kernel_h_;
  int kernel_w_;
  int stride_;
  int pad_;
};

// Square windows of `kernel` × `kernel`, moved by `stride`, no padding; no parameters.
template <class T>
class Pool2d : public Layer<T> {
 public:
  Pool2d(ImageShape input, int kernel, int stride);
  int input_size() const override { return in_.size(); }
  int output_size() const override { return out_.size(); }
  ImageShape output_shape() const { return out_; }

 protected:
  gpu::PoolShape shape(int batch) const;
  double windows() const { return static_cast<double>(out_.size()); }
  double window_area() const { return static_cast<double>(kernel_) * kernel_; }

  ImageShape in_;
  ImageShape out_;
  int kernel_;
  int stride_;
};

// Forward: k² − 1 comparisons per window. Backward: up to k² comparisons to find the window's first
// maximum (the gradient itself is moved, not computed).
template <class T>
class MaxPool2d final : public Pool2d<T> {
 public:
  using Pool2d<T>::Pool2d;
  std::string kind() const override { return "maxpool"; }
  double forward_flops() const override { return this->windows() * (this->window_area() - 1); }
  double backward_flops(bool with_input_grad) const override {
    return with_input_grad ? this->windows() * this->window_area() : 0.0;
  }
  void forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out, T* scratch) const override;
  void backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T> out,
                ConstMatrixView<T> dout, MatrixView<T> din, T* dparams, T* scratch) const override;
};

// Forward: k² − 1 additions and one division per window. Backward: one division and k² additions per
// window.
template <class T>
class AvgPool2d final : public Pool2d<T> {
 public:
  using Pool2d<T>::Pool2d;
  std::string kind() const override { return "avgpool"; }
  double forward_flops() const override { return this->windows() * this->window_area(); }
  double backward_flops(bool with_input_grad) const override {
    return with_input_grad ? this->windows() * (this->window_area() + 1) : 0.0;
  }
  void forward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, MatrixView<T> out, T* scratch) const override;
  void backward(Ops<T>& ops, const T* params, ConstMatrixView<T> in, ConstMatrixView<T> out,
                ConstMatrixView<T> dout, MatrixView<T> din, T* dparams, T* scratch) const override;
};

}  // namespace dtsim::models
