// Translates the scenario's numerics (optimizer, learning-rate schedule, precision) into the settings of
// the models/ layer. Shared by every training strategy.
#pragma once

#include <cstdint>

#include "models/architectures.hpp"
#include "models/dataset.hpp"
#include "models/loss_scaler.hpp"
#include "models/lr_schedule.hpp"
#include "models/mixed_precision.hpp"
#include "models/optimizer.hpp"
#include "sim/config/run_config.hpp"
#include "sim/scenario/key_origins.hpp"

namespace dtsim::sim {

// How long a run is, in optimizer steps, once the data is known.
struct RunLength {
  int64_t steps_per_epoch = 0;  // usable training samples / global batch
  int64_t total_steps = 0;      // epochs × steps_per_epoch, capped by training.max_steps
};
RunLength run_length(const RunConfig& config, int usable_training_samples);

// The network the scenario asks for, shaped for the training set's samples.
models::NetworkSpec network_spec(const RunConfig& config, const models::Dataset& train);
models::OptimizerSettings optimizer_settings(const RunConfig& config);
models::LrScheduleSettings schedule_settings(const RunConfig& config, const RunLength& length);
models::LossScalerSettings loss_scaler_settings(const RunConfig& config);
models::PrecisionSettings precision_settings(const RunConfig& config);

// Builds each of the above once so that the models layer's own validation runs before anything is
// simulated; its complaints become InputErrors at the key a user would change.
void check_numerics(const RunConfig& config, const RunLength& length, const models::Dataset& train,
                    const KeyOrigins& origins);

}  // namespace dtsim::sim
