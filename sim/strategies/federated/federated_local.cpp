#include "sim/strategies/federated/federated_local.hpp"

#include <stdexcept>

namespace dtsim::sim {

LocalTraining::LocalTraining(gpu::Ops<float>& ops, models::Objective<float>& objective, int client,
                             const float* global, const LocalSgdSettings& settings, const float* c_global,
                             const float* c_local)
    : ops_(ops),
      objective_(objective),
      client_(client),
      global_(global),
      settings_(settings),
      c_global_(c_global),
      c_local_(c_local),
      n_(objective.num_params()),
      displacement_(ops, n_),
      point_(ops, n_),
      grad_(ops, n_) {
  ops.fill(displacement_.data(), n_, 0.0f);
  if (settings.momentum > 0) {
    velocity_ = gpu::Buffer<float>(ops, n_);
    ops.fill(velocity_.data(), n_, 0.0f);
  }
  if (settings.algorithm == models::FlAlgorithm::Scaffold) {
    if (!c_global) throw std::logic_error("SCAFFOLD clients need the server's control variate");
    if (!c_local_) {
      zero_control_ = gpu::Buffer<float>(ops, n_);
      ops.fill(zero_control_.data(), n_, 0.0f);
      c_local_ = zero_control_.data();
    }
    // The correction c − c_i is the same for every step of the round.
    correction_ = gpu::Buffer<float>(ops, n_);
    ops.copy(correction_.data(), c_global, n_);
    ops.axpy(-1.0f, c_local_, correction_.data(), n_);
  }
}

double LocalTraining::compute_gradient(int64_t sample_step, const models::NumericsOptions& numerics) {
  ops_.copy(point_.data(), global_, n_);
  ops_.axpy(1.0f, displacement_.data(), point_.data(), n_);
  const double loss = objective_.gradient(client_, sample_step, point_.data(), grad_.data(), numerics);
  if (numerics.loss_scale != 1.0) ops_.scale(static_cast<float>(1.0 / numerics.loss_scale), grad_.data(), n_);
  if (settings_.weight_decay != 0.0)
    ops_.axpy(static_cast<float>(settings_.weight_decay), point_.data(), grad_.data(), n_);
  // FedProx's proximal term; SCAFFOLD's correction is applied in apply_step, outside the momentum buffer.
  models::correct_displaced_gradient(ops_, settings_.algorithm, grad_.data(), displacement_.data(), n_,
                                     settings_.prox_mu);
  return loss;
}

void LocalTraining::apply_step() {
  const float* direction = grad_.data();
  if (!velocity_.empty()) {
    ops_.scale(static_cast<float>(settings_.momentum), velocity_.data(), n_);
    ops_.axpy(1.0f, grad_.data(), velocity_.data(), n_);
    direction = velocity_.data();
  }
  ops_.axpy(static_cast<float>(-settings_.lr), direction, displacement_.data(), n_);
  // SCAFFOLD as its reference implementations run it with momentum: the optimizer steps on the plain gradient,
  // then the iterate moves by −lr·(c − c_i). Inside the momentum buffer the constant correction would be
  // amplified by 1/(1 − momentum) while c_i, estimated from the displacement, already carries that factor:
  // the two feed each other from round to round and the run diverges (to NaN by round 3 at momentum 0.9).
  if (!correction_.empty()) ops_.axpy(static_cast<float>(-settings_.lr), correction_.data(), displacement_.data(), n_);
}

void LocalTraining::finish(int64_t steps_done, gpu::NumberFormat wire_format) {
  point_ = {};
  grad_ = {};
  velocity_ = {};
  correction_ = {};
  if (settings_.algorithm == models::FlAlgorithm::Scaffold) {
    delta_c_ = gpu::Buffer<float>(ops_, n_);
    c_next_ = gpu::Buffer<float>(ops_, n_);
    models::scaffold_control_from_displacement(ops_, c_local_, c_global_, displacement_.data(), n_, steps_done,
                                               settings_.lr, delta_c_.data(), c_next_.data());
    ops_.round_to_format(delta_c_.data(), n_, wire_format);
  }
  zero_control_ = {};
  ops_.round_to_format(displacement_.data(), n_, wire_format);
}

}  // namespace dtsim::sim
