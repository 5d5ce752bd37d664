// Optimizers update a flat parameter vector in place from a flat gradient, both in backend memory. Their
// state (momentum, moments) is per parameter vector, so a worker that owns its own model owns its own
// optimizer. The layer-wise optimizers (LARS, LAMB) also need to know where each parameter tensor lies in
// the flat vector; they take the network's param_tensors().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/buffer.hpp"
#include "gpu/ops.hpp"
#include "models/layer.hpp"
#include "models/name_table.hpp"

namespace dtsim::models {

enum class OptimizerKind { Sgd, Adam, AdamW, Lars, Lamb };

// "sgd" | "adam" | "adamw" | "lars" | "lamb"; throws std::invalid_argument naming the accepted values.
OptimizerKind parse_optimizer_kind(const std::string& text);
const char* to_string(OptimizerKind kind);
const NameTable<OptimizerKind>& optimizer_kind_table();  // the one list of the names above
std::vector<std::string> optimizer_kind_names();         // in table order

struct OptimizerSettings {
  OptimizerKind kind = OptimizerKind::Sgd;
  double momentum = 0.9;      // SGD and LARS (heavy ball, torch semantics); not used by Adam, AdamW, LAMB
  bool nesterov = false;      // SGD and LARS
  double weight_decay = 0.0;  // L2 folded into the gradient (SGD, Adam, LARS, LAMB) or decoupled (AdamW)
  double beta1 = 0.9;         // Adam, AdamW, LAMB
  double beta2 = 0.999;
  double eps = 1e-8;
  double trust_coefficient = 0.001;  // LARS η
  // LARS/LAMB: bias tensors (ParamTensor::is_bias) get trust ratio 1 and no weight decay. Common practice:
  // "no bias decay" (He et al. 2019, Bag of Tricks), and the LAMB authors' BERT code likewise leaves biases
  // out of decay and layer adaptation. SGD, Adam and AdamW decay every parameter, as torch does.
  bool exclude_bias_from_adaptation = true;
};

// Throws std::invalid_argument with a message naming the setting when a value is out of range
// (momentum and betas in [0, 1), eps > 0, weight_decay ≥ 0, trust_coefficient > 0, Nesterov with momentum).
void validate(const OptimizerSettings& settings);

template <class T>
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual std::string name() const = 0;  // the kind's string, as parse_optimizer_kind accepts it
  // One update of params from grads (both num_params long) with learning rate lr. Advances steps_taken().
  virtual void step(T* params, const T* grads, double lr) = 0;
  // Values per parameter the optimizer keeps between steps, as a training framework would hold them in GPU
  // memory (for memory accounting): SGD/LARS 1 with momentum and 0 without (torch keeps no momentum buffer
  // when momentum is 0), Adam/AdamW/LAMB 2. Transient scratch is not state and is not counted.
  virtual int state_values_per_param() const = 0;
  // Steps applied so far; Adam and LAMB use it for their bias corrections. A step skipped by the loss
  // scaler is never passed to step() and does not count, as with torch.cuda.amp.GradScaler.
  int64_t steps_taken() const { return steps_taken_; }

  // Makes this optimizer's state (its moment buffers and step count) a copy of `other`'s: what restoring a
  // checkpoint does. `other` must come from the same settings and size; throws std::invalid_argument if not.
  void copy_state_from(const Optimizer<T>& other);

 protected:
  // Subclasses register the buffers that persist between steps (not scratch), so they can be copied.
  void track_state(gpu::Ops<T>& ops, gpu::Buffer<T>& buffer) {
    ops_ = &ops;
    state_.push_back(&buffer);
  }

  int64_t steps_taken_ = 0;

 private:
  gpu::Ops<T>* ops_ = nullptr;
  std::vector<gpu::Buffer<T>*> state_;
};

// Creates the optimizer `settings.kind` for a flat vector of num_params values. `tensors` (offsets into
// the flat vector, e.g. Network::param_tensors()) must tile [0, num_params) exactly when given; LARS and
// LAMB require them, SGD, Adam and AdamW are elementwise and accept an empty list. The optimizer keeps a
// reference to `ops`, which must outlive it. Throws std::invalid_argument on bad settings or tensors.
template <class T>
std::unique_ptr<Optimizer<T>> make_optimizer(gpu::Ops<T>& ops, const std::vector<ParamTensor>& tensors,
                                             size_t num_params, const OptimizerSettings& settings);

}  // namespace dtsim::models
