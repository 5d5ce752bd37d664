// The numerics of federated learning, shared by the simulator's FL strategy and nothing else: the terms a
// client adds to its local gradient, SCAFFOLD's control variates, FedNova's normalisation, and the server's
// aggregation of one round. The round's timing (who trains, how long, what arrives when) is the simulator's;
// these functions only say what the numbers become.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/buffer.hpp"
#include "models/name_table.hpp"

namespace dtsim::models {

enum class FlAlgorithm { FedAvg, FedProx, Scaffold, FedNova };

FlAlgorithm parse_fl_algorithm(const std::string& text);  // "fedavg" | "fedprox" | "scaffold" | "fednova"
const char* to_string(FlAlgorithm algorithm);

// Settings of the functions below that only some algorithms read (every algorithm reads the server's lr,
// momentum and compensated, the clients' weights and local steps): named as the parameter or field is.
enum class FlSetting {
  ProxMu,        // "prox_mu": the proximal coefficient μ of correct_local_gradient / correct_displaced_gradient
  TotalClients,  // "total_clients": ServerSettings::total_clients, N in SCAFFOLD's c += Σ Δc_i / N
};
const NameTable<FlSetting>& fl_setting_table();
const char* to_string(FlSetting setting);

// One descriptor per algorithm: its name (the one place FlAlgorithm's names are written) and what it does
// differently from FedAvg. The numerics below branch on these flags, never on the algorithm itself, so that an
// algorithm made of these parts is one line in fl_algorithm_registry() (federated.cpp) plus its enum value.
struct FlAlgorithmDescriptor {
  FlAlgorithm algorithm;
  const char* name;  // as parse_fl_algorithm accepts it
  std::vector<FlSetting> settings;  // the settings above that it reads, in FlSetting order
  // grad += μ · (y − x) on the clients (FedProx).
  bool proximal_term = false;
  // Server and client control variates c, c_i: grad += c − c_i, clients upload Δc_i, the server keeps c and
  // moves it by Σ Δc_i / N (SCAFFOLD). A client of such an algorithm keeps c_i between rounds.
  bool control_variates = false;
  // The server divides each client's update by its step norm a_i and rescales by τ_eff (FedNova); the
  // clients report a_i = fednova_step_norm(local steps, local momentum).
  bool normalised_averaging = false;

  bool reads(FlSetting setting) const;
};

// Every algorithm, one descriptor per FlAlgorithm, in FlAlgorithm order (the order of the choices).
const std::vector<FlAlgorithmDescriptor>& fl_algorithm_registry();
// The descriptor of `algorithm`; throws std::invalid_argument for a value outside the enum.
const FlAlgorithmDescriptor& fl_algorithm_descriptor(FlAlgorithm algorithm);
// The one table of FlAlgorithm's names (built from the registry), and the choices list.
const NameTable<FlAlgorithm>& fl_algorithm_table();
std::vector<std::string> fl_algorithm_names();  // fedavg, fedprox, scaffold, fednova

// Adds the algorithm's correction to a client's local gradient `grad` at its local iterate `y`, for the
// round's global model `x`:
//   FedProx (Li et al. 2020):          grad += μ · (y − x)      (the gradient of μ/2 ‖y − x‖²)
//   SCAFFOLD (Karimireddy et al. 2020): grad += c − c_i         (server and client control variates)
//   FedAvg, FedNova:                    nothing
// c_global and c_local are only read for SCAFFOLD; `scratch` needs n values for FedProx and SCAFFOLD.
// Adding SCAFFOLD's c − c_i to the gradient is its update without momentum; with momentum the federated
// client (sim/strategies/federated/federated_local.hpp) applies it outside the momentum buffer instead, as the
// reference implementations do.
template <class T>
void correct_local_gradient(gpu::Ops<T>& ops, FlAlgorithm algorithm, T* grad, const T* y, const T* x, size_t n,
                            double prox_mu, const T* c_global, const T* c_local, T* scratch);

// SCAFFOLD's option II after τ local steps of learning rate η: c_i⁺ = c_i − c + (x − y) / (τ·η).
// Overwrites delta_c with c_i⁺ − c_i (what the client uploads) and c_local with c_i⁺.
template <class T>
void scaffold_update_control(gpu::Ops<T>& ops, T* c_local, const T* c_global, const T* x, const T* y, size_t n,
                             int64_t local_steps, double lr, T* delta_c);

// The same for a client that keeps its iterate as y = x + d and holds the displacement d = y − x itself: d is
// small, so it carries the update with far less rounding than y − x recomputed from two floats near x (this is
// what lets float clients reach the quadratic's fixed points to 1e-6).
//   FedProx:  grad += μ · d            (SCAFFOLD's c − c_i is applied by the client itself, outside momentum)
//   SCAFFOLD option II: Δc_i = −c − d/(τη) written to delta_c; c_next = c_i + Δc_i (c_local is left as it is,
//   so that the client can commit c_next only once the server has accepted its update).
template <class T>
void correct_displaced_gradient(gpu::Ops<T>& ops, FlAlgorithm algorithm, T* grad, const T* displacement, size_t n,
                                double prox_mu);
template <class T>
void scaffold_control_from_displacement(gpu::Ops<T>& ops, const T* c_local, const T* c_global, const T* displacement,
                                        size_t n, int64_t local_steps, double lr, T* delta_c, T* c_next);

// FedNova (Wang et al. 2020): ‖a_i‖₁ of a client's local aggregation vector after τ steps. Plain SGD gives τ;
// heavy-ball momentum ρ gives Σ_{k=0}^{τ−1} (1 − ρ^{k+1}) / (1 − ρ).
double fednova_step_norm(int64_t local_steps, double momentum);

struct ServerSettings {
  FlAlgorithm algorithm = FlAlgorithm::FedAvg;
  double lr = 1.0;        // server learning rate η_g
  double momentum = 0.0;  // server momentum β (FedAvgM, Hsu et al. 2019): v = β·v + Δ̄, x += η_g·v
  int total_clients = 1;  // N, for SCAFFOLD's c += Σ Δc_i / N
  // Kahan-compensated x += η_g·Δ̄: the part of each round's step that rounding to x's float format loses is
  // carried into the next round. Without it, x stops moving once the step falls below half an ulp of x, which
  // near a fixed point with a per-round contraction c leaves x up to ulp(x)/(2c) away from it (3e-6 for
  // FedProx μ = 99 on the validation quadratic, where c = 0.01).
  bool compensated = false;
};

// One round at the server: add() each participating client's result, in client-id order (so the floating-point
// sums do not depend on arrival order), then finish() applies the round to the global model.
//   FedAvg, FedProx, SCAFFOLD: Δ̄ = Σ w_i Δ_i / Σ w_i          (w_i: the client's sample count)
//   FedNova:                   Δ̄ = τ_eff · Σ (w_i/W) Δ_i / a_i, τ_eff = Σ (w_i/W) a_i   (a_i = fednova_step_norm)
// and x += η_g · Δ̄ (through server momentum when β > 0); SCAFFOLD also moves c by Σ Δc_i / N.
template <class T>
class ServerAggregator {
 public:
  ServerAggregator(gpu::Ops<T>& ops, size_t num_params, const ServerSettings& settings);

  void begin_round();
  // delta = y_i − x; weight = w_i > 0; step_norm = a_i (FedNova) ; delta_c = Δc_i (SCAFFOLD, else null).
  void add(const T* delta, double weight, double step_norm, const T* delta_c);
  // Applies the round to x (and c_global for SCAFFOLD). A round with no client leaves both unchanged.
  void finish(T* x, T* c_global);

 private:
  gpu::Ops<T>& ops_;
  ServerSettings settings_;
  const FlAlgorithmDescriptor& algorithm_;
  size_t n_;
  gpu::Buffer<T> weighted_sum_;  // Σ w_i Δ_i, or Σ w_i Δ_i / a_i for FedNova
  gpu::Buffer<T> control_sum_;   // Σ Δc_i
  gpu::Buffer<T> velocity_;      // server momentum
  gpu::Buffer<T> residual_;      // compensated: what rounding has not yet let into x
  gpu::Buffer<T> scratch_;       // compensated: the new x, then what of the step actually reached x
  double weight_sum_ = 0.0;
  double norm_sum_ = 0.0;  // Σ w_i a_i
  int clients_ = 0;
};

}  // namespace dtsim::models
