#include "federated.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dtsim::models {

const std::vector<FlAlgorithmDescriptor>& fl_algorithm_registry() {
  using S = FlSetting;
  // One line per algorithm, in FlAlgorithm order: {algorithm, name, settings, proximal term, control variates,
  // normalised averaging}.
  static const std::vector<FlAlgorithmDescriptor> registry = {
      {FlAlgorithm::FedAvg, "fedavg", {}, false, false, false},
      {FlAlgorithm::FedProx, "fedprox", {S::ProxMu}, true, false, false},
      {FlAlgorithm::Scaffold, "scaffold", {S::TotalClients}, false, true, false},
      {FlAlgorithm::FedNova, "fednova", {}, false, false, true},
  };
  return registry;
}

const FlAlgorithmDescriptor& fl_algorithm_descriptor(FlAlgorithm algorithm) {
  for (const FlAlgorithmDescriptor& d : fl_algorithm_registry())
    if (d.algorithm == algorithm) return d;
  throw std::invalid_argument("unknown federated algorithm");
}

bool FlAlgorithmDescriptor::reads(FlSetting setting) const {
  return std::find(settings.begin(), settings.end(), setting) != settings.end();
}

const NameTable<FlAlgorithm>& fl_algorithm_table() {
  static const NameTable<FlAlgorithm> table = [] {
    std::vector<NameTable<FlAlgorithm>::Entry> entries;
    for (const FlAlgorithmDescriptor& d : fl_algorithm_registry()) entries.push_back({d.algorithm, d.name});
    return NameTable<FlAlgorithm>(std::move(entries));
  }();
  return table;
}

std::vector<std::string> fl_algorithm_names() { return fl_algorithm_table().names(); }

const NameTable<FlSetting>& fl_setting_table() {
  static const NameTable<FlSetting> table{{FlSetting::ProxMu, "prox_mu"}, {FlSetting::TotalClients, "total_clients"}};
  return table;
}

const char* to_string(FlSetting setting) { return fl_setting_table().name(setting); }

FlAlgorithm parse_fl_algorithm(const std::string& text) {
  if (const auto algorithm = fl_algorithm_table().parse(text)) return *algorithm;
  throw std::invalid_argument("unknown federated algorithm '" + text + "' (" + fl_algorithm_table().comma_list() + ")");
}

const char* to_string(FlAlgorithm a) { return fl_algorithm_table().name(a); }

template <class T>
void correct_local_gradient(gpu::Ops<T>& ops, FlAlgorithm algorithm, T* grad, const T* y, const T* x, size_t n,
                            double prox_mu, const T* c_global, const T* c_local, T* scratch) {
  const FlAlgorithmDescriptor& d = fl_algorithm_descriptor(algorithm);
  if (d.proximal_term && prox_mu != 0.0) {
    ops.copy(scratch, y, n);  // scratch = y − x
    ops.axpy(T(-1), x, scratch, n);
    ops.axpy(static_cast<T>(prox_mu), scratch, grad, n);
  } else if (d.control_variates) {
    ops.copy(scratch, c_global, n);  // scratch = c − c_i
    ops.axpy(T(-1), c_local, scratch, n);
    ops.axpy(T(1), scratch, grad, n);
  }
}

template <class T>
void scaffold_update_control(gpu::Ops<T>& ops, T* c_local, const T* c_global, const T* x, const T* y, size_t n,
                             int64_t local_steps, double lr, T* delta_c) {
  if (local_steps <= 0 || lr <= 0) throw std::invalid_argument("SCAFFOLD needs at least one local step and lr > 0");
  // Δc_i = c_i⁺ − c_i = −c + (x − y)/(τη)
  const T inv = static_cast<T>(1.0 / (static_cast<double>(local_steps) * lr));
  ops.copy(delta_c, x, n);
  ops.axpy(T(-1), y, delta_c, n);
  ops.scale(inv, delta_c, n);
  ops.axpy(T(-1), c_global, delta_c, n);
  ops.axpy(T(1), delta_c, c_local, n);
}

template <class T>
void correct_displaced_gradient(gpu::Ops<T>& ops, FlAlgorithm algorithm, T* grad, const T* displacement, size_t n,
                                double prox_mu) {
  if (fl_algorithm_descriptor(algorithm).proximal_term && prox_mu != 0.0)
    ops.axpy(static_cast<T>(prox_mu), displacement, grad, n);
}

template <class T>
void scaffold_control_from_displacement(gpu::Ops<T>& ops, const T* c_local, const T* c_global, const T* displacement,
                                        size_t n, int64_t local_steps, double lr, T* delta_c, T* c_next) {
  if (local_steps <= 0 || lr <= 0) throw std::invalid_argument("SCAFFOLD needs at least one local step and lr > 0");
  // Δc_i = (x − y)/(τη) − c = −d/(τη) − c
  ops.copy(delta_c, displacement, n);
  ops.scale(static_cast<T>(-1.0 / (static_cast<double>(local_steps) * lr)), delta_c, n);
  ops.axpy(T(-1), c_global, delta_c, n);
  ops.copy(c_next, c_local, n);
  ops.axpy(T(1), delta_c, c_next, n);
}

double fednova_step_norm(int64_t local_steps, double momentum) {
  if (local_steps <= 0) return 0.0;
  if (momentum == 0.0) return static_cast<double>(local_steps);
  double norm = 0.0, power = momentum;
  for (int64_t k = 0; k < local_steps; ++k) {
    norm += (1.0 - power) / (1.0 - momentum);
    power *= momentum;
  }
  return norm;
}

template <class T>
ServerAggregator<T>::ServerAggregator(gpu::Ops<T>& ops, size_t num_params, const ServerSettings& settings)
    : ops_(ops),
      settings_(settings),
      algorithm_(fl_algorithm_descriptor(settings.algorithm)),
      n_(num_params),
      weighted_sum_(ops, num_params) {
  if (settings.lr <= 0) throw std::invalid_argument("server learning rate must be > 0");
  if (settings.momentum < 0 || settings.momentum >= 1) throw std::invalid_argument("server momentum must be in [0, 1)");
  if (settings.total_clients < 1) throw std::invalid_argument("need at least one client");
  if (algorithm_.control_variates) control_sum_ = gpu::Buffer<T>(ops, num_params);
  if (settings.momentum > 0) {
    velocity_ = gpu::Buffer<T>(ops, num_params);
    ops.fill(velocity_.data(), n_, T(0));
  }
  if (settings.compensated) {
    residual_ = gpu::Buffer<T>(ops, num_params);
    scratch_ = gpu::Buffer<T>(ops, num_params);
    ops.fill(residual_.data(), n_, T(0));
  }
  begin_round();
}

template <class T>
void ServerAggregator<T>::begin_round() {
  ops_.fill(weighted_sum_.data(), n_, T(0));
  if (!control_sum_.empty()) ops_.fill(control_sum_.data(), n_, T(0));
  weight_sum_ = 0.0;
  norm_sum_ = 0.0;
  clients_ = 0;
}

template <class T>
void ServerAggregator<T>::add(const T* delta, double weight, double step_norm, const T* delta_c) {
  if (!(weight > 0)) throw std::invalid_argument("a client's aggregation weight must be > 0");
  const bool nova = algorithm_.normalised_averaging;
  if (nova && !(step_norm > 0)) throw std::invalid_argument("FedNova needs the client's step norm a_i > 0");
  ops_.axpy(static_cast<T>(nova ? weight / step_norm : weight), delta, weighted_sum_.data(), n_);
  if (algorithm_.control_variates) {
    if (!delta_c) throw std::invalid_argument("SCAFFOLD clients upload a control-variate change");
    ops_.axpy(T(1), delta_c, control_sum_.data(), n_);
  }
  weight_sum_ += weight;
  norm_sum_ += weight * step_norm;
  ++clients_;
}

template <class T>
void ServerAggregator<T>::finish(T* x, T* c_global) {
  if (clients_ == 0) return;
  // Δ̄ = Σ w_i Δ_i / W, or τ_eff · Σ (w_i/W) Δ_i / a_i with τ_eff = Σ w_i a_i / W for FedNova.
  double factor = 1.0 / weight_sum_;
  if (algorithm_.normalised_averaging) factor *= norm_sum_ / weight_sum_;
  ops_.scale(static_cast<T>(factor), weighted_sum_.data(), n_);
  const T* step = weighted_sum_.data();
  if (!velocity_.empty()) {
    ops_.scale(static_cast<T>(settings_.momentum), velocity_.data(), n_);
    ops_.axpy(T(1), weighted_sum_.data(), velocity_.data(), n_);
    step = velocity_.data();
  }
  if (residual_.empty()) {
    ops_.axpy(static_cast<T>(settings_.lr), step, x, n_);
  } else {
    // u = residual + η_g·step; x' = x + u (rounded); residual = u − (x' − x), the part of u that x' misses.
    ops_.axpy(static_cast<T>(settings_.lr), step, residual_.data(), n_);
    ops_.copy(scratch_.data(), x, n_);
    ops_.axpy(T(1), residual_.data(), scratch_.data(), n_);
    ops_.axpy(T(-1), scratch_.data(), x, n_);         // x − x' (exact when x' is within a factor 2 of x)
    ops_.axpy(T(1), x, residual_.data(), n_);         // u − (x' − x)
    ops_.copy(x, scratch_.data(), n_);
  }
  if (algorithm_.control_variates) {
    if (!c_global) throw std::invalid_argument("SCAFFOLD needs the server control variate");
    ops_.axpy(static_cast<T>(1.0 / settings_.total_clients), control_sum_.data(), c_global, n_);
  }
}

template void correct_local_gradient<float>(gpu::Ops<float>&, FlAlgorithm, float*, const float*, const float*, size_t,
                                            double, const float*, const float*, float*);
template void correct_local_gradient<double>(gpu::Ops<double>&, FlAlgorithm, double*, const double*, const double*,
                                             size_t, double, const double*, const double*, double*);
template void scaffold_update_control<float>(gpu::Ops<float>&, float*, const float*, const float*, const float*, size_t,
                                             int64_t, double, float*);
template void scaffold_update_control<double>(gpu::Ops<double>&, double*, const double*, const double*, const double*,
                                              size_t, int64_t, double, double*);
template void correct_displaced_gradient<float>(gpu::Ops<float>&, FlAlgorithm, float*, const float*, size_t, double);
template void correct_displaced_gradient<double>(gpu::Ops<double>&, FlAlgorithm, double*, const double*, size_t,
                                                double);
template void scaffold_control_from_displacement<float>(gpu::Ops<float>&, const float*, const float*, const float*,
                                                        size_t, int64_t, double, float*, float*);
template void scaffold_control_from_displacement<double>(gpu::Ops<double>&, const double*, const double*,
                                                         const double*, size_t, int64_t, double, double*, double*);
template class ServerAggregator<float>;
template class ServerAggregator<double>;

}  // namespace dtsim::models
