#include "loss_scaler.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace dtsim::models {
namespace {

[[noreturn]] void reject(const std::string& what) { throw std::invalid_argument("loss scaler: " + what); }

std::string show(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

bool positive_finite(double x) { return x > 0.0 && std::isfinite(x); }

void validate(const LossScalerSettings& s) {
  if (!positive_finite(s.init_scale)) reject("init_scale must be > 0, got " + show(s.init_scale));
  if (s.mode != LossScaleMode::Dynamic) return;  // the rest only drives the dynamic scale
  if (!(s.growth_factor > 1.0 && std::isfinite(s.growth_factor)))
    reject("growth_factor must be > 1, got " + show(s.growth_factor));
  if (!(s.backoff_factor > 0.0 && s.backoff_factor < 1.0))
    reject("backoff_factor must be in (0, 1), got " + show(s.backoff_factor));
  if (s.growth_interval < 1) reject("growth_interval must be ≥ 1, got " + std::to_string(s.growth_interval));
  if (!positive_finite(s.min_scale)) reject("min_scale must be > 0, got " + show(s.min_scale));
  if (s.init_scale < s.min_scale)
    reject("init_scale (" + show(s.init_scale) + ") must be ≥ min_scale (" + show(s.min_scale) + ")");
}

}  // namespace

const NameTable<LossScaleMode>& loss_scale_mode_table() {
  static const NameTable<LossScaleMode> table{
      {LossScaleMode::None, "none"}, {LossScaleMode::Static, "static"}, {LossScaleMode::Dynamic, "dynamic"}};
  return table;
}

std::vector<std::string> loss_scale_mode_names() { return loss_scale_mode_table().names(); }

LossScaleMode parse_loss_scale_mode(const std::string& text) {
  if (const auto m = loss_scale_mode_table().parse(text)) return *m;
  throw std::invalid_argument("unknown loss scaling '" + text + "'; accepted: " + loss_scale_mode_table().comma_list());
}

const char* to_string(LossScaleMode mode) { return loss_scale_mode_table().name(mode); }

LossScaler::LossScaler(const LossScalerSettings& settings) : settings_(settings), scale_(1.0) {
  validate(settings_);
  if (settings_.mode != LossScaleMode::None) scale_ = settings_.init_scale;
}

bool LossScaler::update(bool overflow) {
  if (overflow) ++overflows_;
  switch (settings_.mode) {
    case LossScaleMode::None: return true;
    case LossScaleMode::Static:
      if (overflow) ++skipped_steps_;
      return !overflow;
    case LossScaleMode::Dynamic: break;
  }
  if (overflow) {
    ++skipped_steps_;
    scale_ = std::max(scale_ * settings_.backoff_factor, settings_.min_scale);
    good_steps_in_a_row_ = 0;
    return false;
  }
  if (++good_steps_in_a_row_ == settings_.growth_interval) {
    good_steps_in_a_row_ = 0;
    // GradScaler keeps the old scale when growing would make it infinite.
    const double grown = scale_ * settings_.growth_factor;
    if (std::isfinite(grown)) {
      scale_ = grown;
      ++growths_;
    }
  }
  return true;
}

template <class T>
bool unscale_and_check(gpu::Ops<T>& ops, T* grads, size_t n, double scale) {
  if (!positive_finite(scale)) reject("cannot unscale by " + show(scale) + "; the scale must be > 0");
  // Check after unscaling: with a scale below 1 the division itself can overflow.
  if (scale != 1.0) ops.scale(static_cast<T>(1.0 / scale), grads, n);
  return ops.count_nonfinite(grads, n) > 0;
}

template bool unscale_and_check(gpu::Ops<float>&, float*, size_t, double);
template bool unscale_and_check(gpu::Ops<double>&, double*, size_t, double);

}  // namespace dtsim::models
