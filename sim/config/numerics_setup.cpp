#include "sim/config/numerics_setup.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "models/network.hpp"
#include "sim/config/strategy.hpp"


namespace dtsim::sim {

RunLength run_length(const RunConfig& c, int usable_training_samples) {
  RunLength length;
  // At least one: a federated round can draw more samples than one pass (many clients, small shards).
  length.steps_per_epoch = std::max(1, usable_training_samples / c.global_batch());
  length.total_steps = static_cast<int64_t>(c.epochs) * length.steps_per_epoch;
  if (c.max_steps > 0) length.total_steps = std::min(length.total_steps, c.max_steps);
  return length;
}

models::NetworkSpec network_spec(const RunConfig& c, const models::Dataset& train) {
  models::NetworkSpec spec;
  spec.arch = c.arch;
  spec.channels = train.channels;
  spec.height = train.height;
  spec.width = train.width;
  spec.classes = train.num_classes;
  // The other architectures have fixed shapes.
  if (models::architecture_descriptor(c.arch).takes_hidden) spec.hidden = c.hidden;
  spec.activation = c.activation;
  return spec;
}

models::OptimizerSettings optimizer_settings(const RunConfig& c) {
  models::OptimizerSettings s;
  s.kind = c.optimizer.kind;
  s.momentum = c.momentum;
  s.nesterov = c.nesterov;
  s.weight_decay = c.weight_decay;
  s.beta1 = c.optimizer.beta1;
  s.beta2 = c.optimizer.beta2;
  s.eps = c.optimizer.eps;
  s.trust_coefficient = c.optimizer.trust_coefficient;
  return s;
}

models::LrScheduleSettings schedule_settings(const RunConfig& c, const RunLength& length) {
  const ScheduleConfig& sc = c.schedule;
  // Epochs are bounded by their keys (at most 1e6) and steps per epoch by the data, so the product fits; the
  // clamp keeps llround defined whatever a test passes.
  const auto epochs_to_steps = [&](double epochs) {
    const double steps = std::min(epochs * static_cast<double>(length.steps_per_epoch), 1e15);
    return static_cast<int64_t>(std::llround(steps));
  };
  models::LrScheduleSettings s;
  s.base_lr = c.lr;
  s.global_batch = c.global_batch();
  s.base_batch = sc.base_batch > 0 ? sc.base_batch : s.global_batch;
  s.scaling = sc.scaling;
  s.warmup_steps = sc.warmup_steps > 0 ? sc.warmup_steps : epochs_to_steps(sc.warmup_epochs);
  s.decay = sc.decay;
  s.step_every = std::max<int64_t>(1, epochs_to_steps(sc.decay_every_epochs));
  s.step_gamma = sc.decay_gamma;
  s.total_steps = length.total_steps;
  s.min_lr = sc.min_lr;
  return s;
}

models::LossScalerSettings loss_scaler_settings(const RunConfig& c) {
  models::LossScalerSettings s;
  s.mode = c.precision.loss_scaling;
  s.init_scale = s.mode == models::LossScaleMode::None ? 1.0 : c.precision.loss_scale;
  s.growth_interval = c.precision.growth_interval;
  return s;
}

models::PrecisionSettings precision_settings(const RunConfig& c) {
  models::PrecisionSettings s;
  s.weights = c.precision.weights;
  s.activations = c.precision.activations;
  s.gradients = c.precision.gradients;
  return s;
}

void check_numerics(const RunConfig& c, const RunLength& length, const models::Dataset& train,
                    const KeyOrigins& at) {
  std::unique_ptr<models::Network<float>> network;
  try {
    network = models::make_network<float>(network_spec(c, train));
  } catch (const std::invalid_argument& e) {
    at.fail("model.arch", e.what());
  }
  // Parameter-server shards hold whole tensors: found here, so that `dtsim check` refuses what the run would.
  if (reads_section(c.strategy, "ps")) {
    const size_t tensors = network->param_tensors().size();
    if (tensors < static_cast<size_t>(c.ps.servers))
      at.fail("ps.servers",
              "the model has " + std::to_string(tensors) + " parameter tensors, too few for " +
                  std::to_string(c.ps.servers) + " shards of whole tensors",
              "use at most " + std::to_string(tensors) + " shards");
  }
  if (length.total_steps < 1)
    at.fail("training.batch_per_worker", "the run would take no optimizer step",
                  "use a smaller batch, fewer workers or more data");
  try {
    models::validate(optimizer_settings(c));
  } catch (const std::invalid_argument& e) {
    at.fail("training.optimizer", e.what());
  }
  try {
    const models::LrSchedule schedule(schedule_settings(c, length));
    (void)schedule;
  } catch (const std::invalid_argument& e) {
    at.fail("training.decay", e.what());
  }
  try {
    const models::LossScaler scaler(loss_scaler_settings(c));
    (void)scaler;
  } catch (const std::invalid_argument& e) {
    at.fail("precision.loss_scale", e.what());
  }
}

}  // namespace dtsim::sim
