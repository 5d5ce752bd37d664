// Learning-rate schedules for large-batch training: scale a base learning rate to the global batch, ramp
// up to it linearly over a warmup, then decay it. Pure arithmetic on the step index; no state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/name_table.hpp"

namespace dtsim::models {

// How the base learning rate (tuned at base_batch) grows with the global batch:
//   None:   peak = base_lr
//   Linear: peak = base_lr · global/base          (Goyal et al. 2017, "Accurate, Large Minibatch SGD")
//   Sqrt:   peak = base_lr · sqrt(global/base)    (Krizhevsky 2014; Hoffer et al. 2017)
enum class LrScaling { None, Linear, Sqrt };

// What happens after the warmup, with s = step − warmup_steps:
//   Constant: peak
//   Step:     peak · step_gamma^floor(s / step_every)
//   Cosine:   min_lr + (peak − min_lr) · ½(1 + cos(π · s / (total_steps − warmup_steps))), reaching min_lr at
//             step = total_steps and staying there (Loshchilov & Hutter 2017, SGDR, without restarts)
enum class LrDecay { Constant, Step, Cosine };

// "none" | "linear" | "sqrt" and "constant" | "step" | "cosine"; throw std::invalid_argument naming the
// accepted values.
LrScaling parse_lr_scaling(const std::string& text);
LrDecay parse_lr_decay(const std::string& text);
const char* to_string(LrScaling scaling);
const char* to_string(LrDecay decay);
const NameTable<LrScaling>& lr_scaling_table();  // the one list of each enum's names
const NameTable<LrDecay>& lr_decay_table();
std::vector<std::string> lr_scaling_names();     // in table order
std::vector<std::string> lr_decay_names();

struct LrScheduleSettings {
  double base_lr = 0.0;   // > 0
  int base_batch = 0;     // batch size base_lr was tuned for; > 0 unless scaling is None
  int global_batch = 0;   // batch size of this run; > 0 unless scaling is None
  LrScaling scaling = LrScaling::None;
  int64_t warmup_steps = 0;  // ≥ 0
  // Where the warmup starts. Unset: at peak / warmup_steps (the ramp's first step, as below). Set: at this
  // rate, in [0, peak], reached at step 0 (Goyal et al. 2017 start at the small-batch rate, base_lr).
  std::optional<double> warmup_start_lr;
  LrDecay decay = LrDecay::Constant;
  int64_t step_every = 0;    // Step: > 0
  double step_gamma = 0.1;   // Step: in (0, 1]
  int64_t total_steps = 0;   // Cosine: > warmup_steps; otherwise unused
  double min_lr = 0.0;       // Cosine: in [0, peak]; must be 0 for the other decays, which do not use it
};

class LrSchedule {
 public:
  // Throws std::invalid_argument with a message naming the offending setting.
  explicit LrSchedule(const LrScheduleSettings& settings);

  // Learning rate of the optimizer step with 0-based index `step` (≥ 0). During the warmup
  // (step < warmup_steps) it ramps linearly, peak · (step + 1) / warmup_steps, so that the last warmup
  // step reaches the peak; with warmup_start_lr = s set, s + (peak − s) · step / warmup_steps, so that step 0
  // runs at s and step warmup_steps at the peak (Goyal et al. 2017). The decay then runs from the peak.
  double lr(int64_t step) const;
  // base_lr after batch scaling: the rate at the end of the warmup.
  double peak_lr() const { return peak_lr_; }
  const LrScheduleSettings& settings() const { return settings_; }

 private:
  LrScheduleSettings settings_;
  double peak_lr_;
};

}  // namespace dtsim::models
