#include "optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "gpu/buffer.hpp"
#include "gpu/portable_math.hpp"

namespace dtsim::models {
namespace {

[[noreturn]] void reject(const std::string& what) { throw std::invalid_argument("optimizer: " + what); }

// %g rather than std::to_string, which prints 1e-8 as 0.000000.
std::string show(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

void require_unit_interval(double value, const char* name) {
  // Written so that NaN fails too.
  if (!(value >= 0.0 && value < 1.0)) reject(std::string(name) + " must be in [0, 1), got " + show(value));
}

// LARS and LAMB adapt each tensor separately, so every parameter must belong to exactly one tensor.
std::vector<ParamTensor> tiling_tensors(const std::vector<ParamTensor>& tensors, size_t num_params) {
  std::vector<ParamTensor> sorted = tensors;
  // An empty tensor sorts before a non-empty one at the same offset, so it never looks like an overlap.
  std::stable_sort(sorted.begin(), sorted.end(), [](const ParamTensor& a, const ParamTensor& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.size < b.size;
  });
  size_t end = 0;
  for (const ParamTensor& t : sorted) {
    if (t.offset != end)
      reject("parameter tensor '" + t.name + "' starts at " + std::to_string(t.offset) +
             " but the previous one ends at " + std::to_string(end) +
             " (tensors must tile the parameter vector without gaps or overlaps)");
    end += t.size;
  }
  if (end != num_params)
    reject("parameter tensors cover " + std::to_string(end) + " values but the vector has " +
           std::to_string(num_params));
  return sorted;
}

size_t largest_tensor(const std::vector<ParamTensor>& tensors) {
  size_t largest = 0;
  for (const ParamTensor& t : tensors) largest = std::max(largest, t.size);
  return largest;
}

template <class T>
gpu::Buffer<T> zeroed(gpu::Ops<T>& ops, size_t count) {
  gpu::Buffer<T> b(ops, count);
  ops.fill(b.data(), count, T(0));
  return b;
}

template <class T>
double l2_norm(gpu::Ops<T>& ops, const T* x, size_t count) {
  return std::sqrt(ops.sum_squares(x, count));
}

// Adam's bias corrections 1 − β^t for the step being taken (t starts at 1).
double bias_correction(double beta, int64_t step_number) {
  return 1.0 - portable::pow(beta, static_cast<double>(step_number));
}

// SGD with heavy-ball momentum, optional Nesterov and L2 weight decay, exactly torch.optim.SGD with
// dampening 0 (ops.sgd_momentum_update):  g' = g + wd·w;  v = μ·v + g';  w -= lr·(nesterov ? g' + μ·v : v).
template <class T>
class Sgd final : public Optimizer<T> {
 public:
  Sgd(gpu::Ops<T>& ops, size_t num_params, const OptimizerSettings& s)
      : ops_(ops), settings_(s), velocity_(zeroed(ops, num_params)) {
    this->track_state(ops, velocity_);
  }
  std::string name() const override { return "sgd"; }
  int state_values_per_param() const override { return settings_.momentum != 0.0 ? 1 : 0; }
  void step(T* params, const T* grads, double lr) override {
    // With momentum 0 the fused op still writes g' into the velocity buffer; that is scratch, not state.
    ops_.sgd_momentum_update(params, grads, velocity_.data(), velocity_.size(), static_cast<T>(lr),
                             static_cast<T>(settings_.momentum), static_cast<T>(settings_.weight_decay),
                             settings_.nesterov);
    ++this->steps_taken_;
  }

 private:
  gpu::Ops<T>& ops_;
  OptimizerSettings settings_;
  gpu::Buffer<T> velocity_;
};

// Adam (Kingma & Ba 2015) with L2 decay in the gradient, as torch.optim.Adam, or with `decoupled` AdamW
// (Loshchilov & Hutter 2019, torch.optim.AdamW: w *= 1 − lr·wd before the Adam step). Bias corrections
// 1 − β1^t and 1 − β2^t use this optimizer's own step counter, t = 1 on the first step.
template <class T>
class Adam final : public Optimizer<T> {
 public:
  Adam(gpu::Ops<T>& ops, size_t num_params, const OptimizerSettings& s, bool decoupled)
      : ops_(ops), settings_(s), decoupled_(decoupled), m_(zeroed(ops, num_params)), v_(zeroed(ops, num_params)) {
    this->track_state(ops, m_);
    this->track_state(ops, v_);
  }
  std::string name() const override { return decoupled_ ? "adamw" : "adam"; }
  int state_values_per_param() const override { return 2; }
  void step(T* params, const T* grads, double lr) override {
    const int64_t t = this->steps_taken_ + 1;
    ops_.adam_update(params, grads, m_.data(), v_.data(), m_.size(), static_cast<T>(lr),
                     static_cast<T>(settings_.beta1), static_cast<T>(settings_.beta2), static_cast<T>(settings_.eps),
                     static_cast<T>(settings_.weight_decay), decoupled_,
                     static_cast<T>(bias_correction(settings_.beta1, t)),
                     static_cast<T>(bias_correction(settings_.beta2, t)));
    this->steps_taken_ = t;
  }

 private:
  gpu::Ops<T>& ops_;
  OptimizerSettings settings_;
  bool decoupled_;
  gpu::Buffer<T> m_;
  gpu::Buffer<T> v_;
};

// LARS (You, Gitman & Ginsburg 2017, "Large Batch Training of Convolutional Networks"), in the form of
// NVIDIA Apex's LARC wrapped around torch SGD. Per parameter tensor:
//   trust = η·‖w‖ / (‖g‖ + wd·‖w‖)   (1 when ‖w‖ or ‖g‖ is 0: nothing to compare the step with)
//   g' = trust·(g + wd·w)
// then heavy-ball momentum on g' with lr and no further decay: v = μ·v + g';  w -= lr·v (or Nesterov).
// With exclude_bias_from_adaptation, bias tensors use g' = g (trust 1, no decay).
template <class T>
class Lars final : public Optimizer<T> {
 public:
  Lars(gpu::Ops<T>& ops, std::vector<ParamTensor> tensors, size_t num_params, const OptimizerSettings& s)
      : ops_(ops),
        settings_(s),
        tensors_(std::move(tensors)),
        velocity_(zeroed(ops, num_params)),
        scaled_grad_(ops, largest_tensor(tensors_)) {
    this->track_state(ops, velocity_);
  }
  std::string name() const override { return "lars"; }
  int state_values_per_param() const override { return settings_.momentum != 0.0 ? 1 : 0; }
  void step(T* params, const T* grads, double lr) override {
    for (const ParamTensor& t : tensors_) {
      if (t.size == 0) continue;
      T* w = params + t.offset;
      const T* g = grads + t.offset;
      const T* adapted = g;
      if (!(settings_.exclude_bias_from_adaptation && t.is_bias)) {
        const double wd = settings_.weight_decay;
        const double w_norm = l2_norm(ops_, w, t.size);
        const double g_norm = l2_norm(ops_, g, t.size);
        const double trust =
            w_norm > 0.0 && g_norm > 0.0 ? settings_.trust_coefficient * w_norm / (g_norm + wd * w_norm) : 1.0;
        T* scratch = scaled_grad_.data();
        ops_.copy(scratch, g, t.size);
        if (wd != 0.0) ops_.axpy(static_cast<T>(wd), w, scratch, t.size);
        ops_.scale(static_cast<T>(trust), scratch, t.size);
        adapted = scratch;
      }
      ops_.sgd_momentum_update(w, adapted, velocity_.data() + t.offset, t.size, static_cast<T>(lr),
                               static_cast<T>(settings_.momentum), T(0), settings_.nesterov);
    }
    ++this->steps_taken_;
  }

 private:
  gpu::Ops<T>& ops_;
  OptimizerSettings settings_;
  std::vector<ParamTensor> tensors_;
  gpu::Buffer<T> velocity_;
  gpu::Buffer<T> scaled_grad_;  // g' of one tensor at a time
};

// LAMB (You et al. 2020, "Large Batch Optimization for Deep Learning: Training BERT in 76 minutes"),
// with Adam's bias corrections. Per parameter tensor:
//   u = m̂ / (sqrt(v̂) + eps) + wd·w          (ops.lamb_direction)
//   trust = ‖w‖ / ‖u‖   (1 when either is 0);   w -= lr·trust·u
// With exclude_bias_from_adaptation, bias tensors use wd = 0 and trust 1.
template <class T>
class Lamb final : public Optimizer<T> {
 public:
  Lamb(gpu::Ops<T>& ops, std::vector<ParamTensor> tensors, size_t num_params, const OptimizerSettings& s)
      : ops_(ops),
        settings_(s),
        tensors_(std::move(tensors)),
        m_(zeroed(ops, num_params)),
        v_(zeroed(ops, num_params)),
        direction_(ops, largest_tensor(tensors_)) {
    this->track_state(ops, m_);
    this->track_state(ops, v_);
  }
  std::string name() const override { return "lamb"; }
  int state_values_per_param() const override { return 2; }
  void step(T* params, const T* grads, double lr) override {
    const int64_t step_number = this->steps_taken_ + 1;
    const T bc1 = static_cast<T>(bias_correction(settings_.beta1, step_number));
    const T bc2 = static_cast<T>(bias_correction(settings_.beta2, step_number));
    for (const ParamTensor& t : tensors_) {
      if (t.size == 0) continue;
      const bool excluded = settings_.exclude_bias_from_adaptation && t.is_bias;
      T* w = params + t.offset;
      T* u = direction_.data();
      ops_.lamb_direction(w, grads + t.offset, m_.data() + t.offset, v_.data() + t.offset, u, t.size,
                          static_cast<T>(settings_.beta1), static_cast<T>(settings_.beta2),
                          static_cast<T>(settings_.eps), excluded ? T(0) : static_cast<T>(settings_.weight_decay),
                          bc1, bc2);
      double trust = 1.0;
      if (!excluded) {
        const double w_norm = l2_norm(ops_, w, t.size);
        const double u_norm = l2_norm(ops_, u, t.size);
        if (w_norm > 0.0 && u_norm > 0.0) trust = w_norm / u_norm;
      }
      ops_.axpy(static_cast<T>(-lr * trust), u, w, t.size);
    }
    this->steps_taken_ = step_number;
  }

 private:
  gpu::Ops<T>& ops_;
  OptimizerSettings settings_;
  std::vector<ParamTensor> tensors_;
  gpu::Buffer<T> m_;
  gpu::Buffer<T> v_;
  gpu::Buffer<T> direction_;  // u of one tensor at a time
};

}  // namespace

const NameTable<OptimizerKind>& optimizer_kind_table() {
  static const NameTable<OptimizerKind> table{{OptimizerKind::Sgd, "sgd"},
                                              {OptimizerKind::Adam, "adam"},
                                              {OptimizerKind::AdamW, "adamw"},
                                              {OptimizerKind::Lars, "lars"},
                                              {OptimizerKind::Lamb, "lamb"}};
  return table;
}

std::vector<std::string> optimizer_kind_names() { return optimizer_kind_table().names(); }

OptimizerKind parse_optimizer_kind(const std::string& text) {
  if (const auto kind = optimizer_kind_table().parse(text)) return *kind;
  throw std::invalid_argument("unknown optimizer '" + text + "'; accepted: " + optimizer_kind_table().comma_list());
}

const char* to_string(OptimizerKind kind) { return optimizer_kind_table().name(kind); }

void validate(const OptimizerSettings& s) {
  const bool uses_momentum = s.kind == OptimizerKind::Sgd || s.kind == OptimizerKind::Lars;
  if (uses_momentum) {
    require_unit_interval(s.momentum, "momentum");
    // torch.optim.SGD refuses this too: Nesterov without momentum is plain SGD under another name.
    if (s.nesterov && s.momentum == 0.0) reject("nesterov requires a momentum > 0");
  } else {
    require_unit_interval(s.beta1, "beta1");
    require_unit_interval(s.beta2, "beta2");
    if (!(s.eps > 0.0 && std::isfinite(s.eps))) reject("eps must be > 0, got " + show(s.eps));
  }
  if (!(s.weight_decay >= 0.0 && std::isfinite(s.weight_decay)))
    reject("weight_decay must be ≥ 0, got " + show(s.weight_decay));
  if (s.kind == OptimizerKind::Lars && !(s.trust_coefficient > 0.0 && std::isfinite(s.trust_coefficient)))
    reject("trust_coefficient must be > 0, got " + show(s.trust_coefficient));
}

template <class T>
void Optimizer<T>::copy_state_from(const Optimizer<T>& other) {
  if (other.name() != name() || other.state_.size() != state_.size())
    throw std::invalid_argument("cannot copy the state of a " + other.name() + " optimizer into a " + name() + " one");
  for (size_t i = 0; i < state_.size(); ++i) {
    if (state_[i]->size() != other.state_[i]->size())
      throw std::invalid_argument("optimizer state of a different size");
    ops_->copy(state_[i]->data(), other.state_[i]->data(), state_[i]->size());
  }
  steps_taken_ = other.steps_taken_;
}

template <class T>
std::unique_ptr<Optimizer<T>> make_optimizer(gpu::Ops<T>& ops, const std::vector<ParamTensor>& tensors,
                                             size_t num_params, const OptimizerSettings& settings) {
  validate(settings);
  const bool layer_wise = settings.kind == OptimizerKind::Lars || settings.kind == OptimizerKind::Lamb;
  if (layer_wise && tensors.empty())
    reject(std::string(to_string(settings.kind)) + " adapts each parameter tensor and needs the tensor list");
  // Checked for every kind: a list that does not match the vector is a caller's bug worth reporting.
  std::vector<ParamTensor> tiled = tensors.empty() ? tensors : tiling_tensors(tensors, num_params);
  switch (settings.kind) {
    case OptimizerKind::Sgd: return std::make_unique<Sgd<T>>(ops, num_params, settings);
    case OptimizerKind::Adam: return std::make_unique<Adam<T>>(ops, num_params, settings, false);
    case OptimizerKind::AdamW: return std::make_unique<Adam<T>>(ops, num_params, settings, true);
    case OptimizerKind::Lars: return std::make_unique<Lars<T>>(ops, std::move(tiled), num_params, settings);
    case OptimizerKind::Lamb: return std::make_unique<Lamb<T>>(ops, std::move(tiled), num_params, settings);
  }
  reject("unknown optimizer kind");
}

template class Optimizer<float>;
template class Optimizer<double>;
template std::unique_ptr<Optimizer<float>> make_optimizer(gpu::Ops<float>&, const std::vector<ParamTensor>&, size_t,
                                                          const OptimizerSettings&);
template std::unique_ptr<Optimizer<double>> make_optimizer(gpu::Ops<double>&, const std::vector<ParamTensor>&,
                                                           size_t, const OptimizerSettings&);

}  // namespace dtsim::models
