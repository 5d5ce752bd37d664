// A federated client's local training within one round: the real numerics of its local SGD steps, from the
// global model it downloaded to the update it uploads. It exists only while the client takes part in a
// round (a client that is not selected holds no model), and it has no notion of time: the strategy decides
// when each step happens and whether it counts.
//
// The client keeps its iterate as y = x + d and updates the displacement d, which is also its update Δ = y − x
// (see models/federated.hpp). One local step at y:
//   g = ∇F_c(y) + weight_decay·y (+ FedProx's μ·d)
//   v = momentum·v + g  (v starts at 0 every round; without momentum v = g)
//   d −= lr·v
//   d −= lr·(c − c_i)   (SCAFFOLD: outside the momentum buffer, as its reference implementations apply it;
//                        without momentum the same as adding c − c_i to g)
#pragma once

#include <cstdint>

#include "gpu/buffer.hpp"
#include "models/federated.hpp"
#include "models/objective.hpp"

namespace dtsim::sim {

struct LocalSgdSettings {
  models::FlAlgorithm algorithm = models::FlAlgorithm::FedAvg;
  double lr = 0.01;
  double momentum = 0.0;
  double weight_decay = 0.0;
  double prox_mu = 0.0;
};

class LocalTraining {
 public:
  // `global` (backend memory) is the model the client downloaded; it must not change while the client trains.
  // SCAFFOLD reads `c_global` and `c_local` (null: a client that never took part, c_i = 0).
  LocalTraining(gpu::Ops<float>& ops, models::Objective<float>& objective, int client, const float* global,
                const LocalSgdSettings& settings, const float* c_global = nullptr, const float* c_local = nullptr);

  // The gradient at y = x + d for the client's `sample_step`-th gradient (it picks the mini-batch), corrected
  // for the algorithm. Returns the mini-batch's mean loss. Call step() to apply it.
  double compute_gradient(int64_t sample_step, const models::NumericsOptions& numerics);
  void apply_step();

  // After `steps_done` ≥ 1 applied steps: frees the training buffers, computes SCAFFOLD's Δc_i and c_i⁺,
  // and rounds what will be uploaded to the wire format.
  void finish(int64_t steps_done, gpu::NumberFormat wire_format);

  const float* update() const { return displacement_.data(); }  // Δ = y − x
  float* mutable_update() { return displacement_.data(); }       // for compression: overwritten with the decoded Δ
  const float* control_update() const { return delta_c_.empty() ? nullptr : delta_c_.data(); }  // Δc_i
  const float* next_control() const { return c_next_.empty() ? nullptr : c_next_.data(); }      // c_i⁺

 private:
  gpu::Ops<float>& ops_;
  models::Objective<float>& objective_;
  int client_;
  const float* global_;
  LocalSgdSettings settings_;
  const float* c_global_;
  const float* c_local_;
  size_t n_;
  gpu::Buffer<float> displacement_;
  gpu::Buffer<float> point_;     // y = x + d, where the gradient is taken
  gpu::Buffer<float> grad_;
  gpu::Buffer<float> velocity_;  // momentum only
  gpu::Buffer<float> correction_;  // SCAFFOLD: c − c_i
  gpu::Buffer<float> zero_control_;  // c_i of a first-time SCAFFOLD client
  gpu::Buffer<float> delta_c_;
  gpu::Buffer<float> c_next_;
};

}  // namespace dtsim::sim
