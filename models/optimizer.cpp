#include "optimizer.hpp"

namespace dtsim::models {

template <class T>
SgdMomentum<T>::SgdMomentum(gpu::Ops<T>& ops, size_t num_params, SgdSettings settings)
    : ops_(ops), settings_(settings), velocity_(ops, num_params) {
  ops_.fill(velocity_.data(), velocity_.size(), T(0));
}

template <class T>
void SgdMomentum<T>::step(T* params, const T* grads, double lr) {
  ops_.sgd_momentum_update(params, grads, velocity_.data(), velocity_.size(), static_cast<T>(lr),
                           static_cast<T>(settings_.momentum), static_cast<T>(settings_.weight_decay),
                           settings_.nesterov);
}

template class SgdMomentum<float>;
template class SgdMomentum<double>;

}  // namespace dtsim::models
