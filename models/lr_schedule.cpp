#include "lr_schedule.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "gpu/portable_math.hpp"

namespace dtsim::models {
namespace {

[[noreturn]] void reject(const std::string& what) { throw std::invalid_argument("lr schedule: " + what); }

std::string show(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

double batch_scale(const LrScheduleSettings& s) {
  if (s.scaling == LrScaling::None) return 1.0;
  if (s.base_batch <= 0 || s.global_batch <= 0)
    reject(std::string("base_batch and global_batch must be > 0 for ") + to_string(s.scaling) + " scaling, got " +
           std::to_string(s.base_batch) + " and " + std::to_string(s.global_batch));
  const double ratio = static_cast<double>(s.global_batch) / s.base_batch;
  return s.scaling == LrScaling::Linear ? ratio : std::sqrt(ratio);
}

void validate_decay(const LrScheduleSettings& s, double peak) {
  if (s.decay == LrDecay::Step) {
    if (s.step_every <= 0) reject("step decay needs step_every > 0, got " + std::to_string(s.step_every));
    if (!(s.step_gamma > 0.0 && s.step_gamma <= 1.0)) reject("step_gamma must be in (0, 1], got " + show(s.step_gamma));
  }
  if (s.decay == LrDecay::Cosine) {
    if (s.total_steps <= s.warmup_steps)
      reject("cosine decay needs total_steps > warmup_steps, got " + std::to_string(s.total_steps) + " and " +
             std::to_string(s.warmup_steps));
    if (!(s.min_lr >= 0.0 && s.min_lr <= peak))
      reject("min_lr must be in [0, peak lr = " + show(peak) + "], got " + show(s.min_lr));
  } else if (s.min_lr != 0.0) {
    reject("min_lr applies to cosine decay only, but decay is " + std::string(to_string(s.decay)));
  }
}

}  // namespace

const NameTable<LrScaling>& lr_scaling_table() {
  static const NameTable<LrScaling> table{
      {LrScaling::None, "none"}, {LrScaling::Linear, "linear"}, {LrScaling::Sqrt, "sqrt"}};
  return table;
}

const NameTable<LrDecay>& lr_decay_table() {
  static const NameTable<LrDecay> table{
      {LrDecay::Constant, "constant"}, {LrDecay::Step, "step"}, {LrDecay::Cosine, "cosine"}};
  return table;
}

std::vector<std::string> lr_scaling_names() { return lr_scaling_table().names(); }
std::vector<std::string> lr_decay_names() { return lr_decay_table().names(); }

LrScaling parse_lr_scaling(const std::string& text) {
  if (const auto v = lr_scaling_table().parse(text)) return *v;
  throw std::invalid_argument("unknown learning-rate scaling '" + text + "'; accepted: " +
                              lr_scaling_table().comma_list());
}

LrDecay parse_lr_decay(const std::string& text) {
  if (const auto v = lr_decay_table().parse(text)) return *v;
  throw std::invalid_argument("unknown learning-rate decay '" + text + "'; accepted: " + lr_decay_table().comma_list());
}

const char* to_string(LrScaling scaling) { return lr_scaling_table().name(scaling); }
const char* to_string(LrDecay decay) { return lr_decay_table().name(decay); }

LrSchedule::LrSchedule(const LrScheduleSettings& settings) : settings_(settings), peak_lr_(0.0) {
  if (!(settings.base_lr > 0.0 && std::isfinite(settings.base_lr)))
    reject("base_lr must be > 0, got " + show(settings.base_lr));
  if (settings.warmup_steps < 0) reject("warmup_steps must be ≥ 0, got " + std::to_string(settings.warmup_steps));
  peak_lr_ = settings.base_lr * batch_scale(settings);
  if (const auto& start = settings.warmup_start_lr)
    if (!(*start >= 0.0 && *start <= peak_lr_))
      reject("the warmup's start rate must be in [0, the peak " + show(peak_lr_) + "], got " + show(*start));
  validate_decay(settings, peak_lr_);
}

double LrSchedule::lr(int64_t step) const {
  if (step < 0) throw std::invalid_argument("lr schedule: step must be ≥ 0, got " + std::to_string(step));
  const LrScheduleSettings& s = settings_;
  if (step < s.warmup_steps) {
    if (s.warmup_start_lr)
      return *s.warmup_start_lr +
             (peak_lr_ - *s.warmup_start_lr) * static_cast<double>(step) / static_cast<double>(s.warmup_steps);
    return peak_lr_ * static_cast<double>(step + 1) / static_cast<double>(s.warmup_steps);
  }
  const int64_t since_warmup = step - s.warmup_steps;
  switch (s.decay) {
    case LrDecay::Constant: return peak_lr_;
    case LrDecay::Step: return peak_lr_ * portable::pow(s.step_gamma, static_cast<double>(since_warmup / s.step_every));
    case LrDecay::Cosine: {
      const int64_t span = s.total_steps - s.warmup_steps;
      if (since_warmup >= span) return s.min_lr;
      const double progress = static_cast<double>(since_warmup) / static_cast<double>(span);
      return s.min_lr + (peak_lr_ - s.min_lr) * 0.5 * (1.0 + portable::cos(M_PI * progress));
    }
  }
  return peak_lr_;
}

}  // namespace dtsim::models
