// The sections that say what is computed and how: [compute], [model], [training] and [precision]. Their keys
// and the code that reads them live in numerics_config.cpp; the values land in RunConfig (run_config.hpp),
// the optimizer, schedule and precision settings in the small structs below.
#pragma once

#include <optional>

#include <cstdint>

#include "gpu/number_format.hpp"
#include "models/loss_scaler.hpp"
#include "models/lr_schedule.hpp"
#include "models/optimizer.hpp"

namespace dtsim::sim {

class Scenario;
struct RunConfig;

struct OptimizerConfig {
  models::OptimizerKind kind = models::OptimizerKind::Sgd;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double trust_coefficient = 0.001;
};

struct ScheduleConfig {
  int base_batch = 0;  // 0 = the global batch
  models::LrScaling scaling = models::LrScaling::None;
  double warmup_epochs = 0.0;
  int64_t warmup_steps = 0;
  // training.warmup_start_lr: unset, "base" (the unscaled training.lr) or a rate.
  bool warmup_start_base = false;
  std::optional<double> warmup_start_lr;
  models::LrDecay decay = models::LrDecay::Constant;
  double decay_every_epochs = 30.0;
  double decay_gamma = 0.1;
  double min_lr = 0.0;
};

struct PrecisionConfig {
  gpu::NumberFormat weights = gpu::NumberFormat::Fp32;
  gpu::NumberFormat activations = gpu::NumberFormat::Fp32;
  gpu::NumberFormat gradients = gpu::NumberFormat::Fp32;
  models::LossScaleMode loss_scaling = models::LossScaleMode::None;
  double loss_scale = 65536.0;
  int64_t growth_interval = 2000;
};

// Reads [compute], [model], [training] and [precision] (and nothing else) into `config`.
void read_numerics_sections(const Scenario& scenario, RunConfig& config);

}  // namespace dtsim::sim
