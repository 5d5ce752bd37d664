// Loss scaling for fp16 training (Micikevicius et al. 2018, "Mixed Precision Training"): the loss is
// multiplied by a scale before the backward pass so that small gradients survive fp16, and the gradients
// are divided by it again before the optimizer step. A step whose gradients overflowed is skipped. The
// dynamic mode follows torch.cuda.amp.GradScaler.
//
// Per step:  grads computed with loss × scale()  →  overflow = unscale_and_check(...)
//            →  if (scaler.update(overflow)) optimizer.step(...)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpu/ops.hpp"
#include "models/name_table.hpp"

namespace dtsim::models {

// None:    scale 1 and no step is ever skipped; non-finite gradients are still counted as overflows, so a
//          run can report that it trained through them (the optimizer then propagates the NaN/inf).
// Static:  the scale stays init_scale; an overflowing step is skipped and counted.
// Dynamic: an overflowing step is skipped and the scale multiplied by backoff_factor (not below
//          min_scale); after growth_interval consecutive good steps it is multiplied by growth_factor.
enum class LossScaleMode { None, Static, Dynamic };

// "none" | "static" | "dynamic"; throws std::invalid_argument naming the accepted values.
LossScaleMode parse_loss_scale_mode(const std::string& text);
const char* to_string(LossScaleMode mode);
const NameTable<LossScaleMode>& loss_scale_mode_table();  // the one list of the names above
std::vector<std::string> loss_scale_mode_names();         // in table order

struct LossScalerSettings {
  LossScaleMode mode = LossScaleMode::Dynamic;
  double init_scale = 65536.0;  // 2^16, GradScaler's default; > 0 (≥ min_scale when dynamic)
  double growth_factor = 2.0;   // > 1
  double backoff_factor = 0.5;  // in (0, 1)
  int64_t growth_interval = 2000;  // ≥ 1
  double min_scale = 1.0;          // > 0; a floor GradScaler does not have, so the scale cannot underflow to 0
};

class LossScaler {
 public:
  // Throws std::invalid_argument with a message naming the offending setting.
  explicit LossScaler(const LossScalerSettings& settings = {});

  // The factor to multiply the loss (equivalently the output gradient) by for the next backward pass.
  double scale() const { return scale_; }
  // Records whether this step's gradients overflowed and adapts the scale. Returns whether the optimizer
  // step may be applied: false means skip it.
  bool update(bool overflow);

  int64_t overflows() const { return overflows_; }        // steps whose gradients were not finite
  int64_t skipped_steps() const { return skipped_steps_; }  // steps update() told the caller to skip
  int64_t growths() const { return growths_; }              // times the dynamic scale grew
  const LossScalerSettings& settings() const { return settings_; }

 private:
  LossScalerSettings settings_;
  double scale_;
  int64_t good_steps_in_a_row_ = 0;
  int64_t overflows_ = 0;
  int64_t skipped_steps_ = 0;
  int64_t growths_ = 0;
};

// Divides the n gradients by `scale` in place (multiplies by 1/scale) and returns true when any of them is
// then NaN or ±inf, i.e. the step overflowed (including an unscaling that overflows when scale < 1). On
// overflow the gradients are unusable and the step must be skipped. Throws std::invalid_argument unless
// scale is finite and > 0.
template <class T>
bool unscale_and_check(gpu::Ops<T>& ops, T* grads, size_t n, double scale);

}  // namespace dtsim::models
