// Optimizers update a flat parameter vector in place from a flat gradient. Their state (momentum,
// moments) is per parameter vector, so a worker that owns its own model owns its own optimizer.
#pragma once

#include <memory>
#include <string>

#include "gpu/buffer.hpp"

namespace dtsim::models {

struct SgdSettings {
  double momentum = 0.0;
  double weight_decay = 0.0;  // L2, added to the gradient
  bool nesterov = false;
};

template <class T>
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual std::string name() const = 0;
  virtual void step(T* params, const T* grads, double lr) = 0;
};

template <class T>
class SgdMomentum final : public Optimizer<T> {
 public:
  SgdMomentum(gpu::Ops<T>& ops, size_t num_params, SgdSettings settings);
  std::string name() const override { return "sgd"; }
  void step(T* params, const T* grads, double lr) override;

 private:
  gpu::Ops<T>& ops_;
  SgdSettings settings_;
  gpu::Buffer<T> velocity_;
};

}  // namespace dtsim::models
