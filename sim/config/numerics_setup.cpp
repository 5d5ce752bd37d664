#include "sim/config/numerics_setup.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include <string>
#include <vector>

#include "models/network.hpp"
#include "models/workload/network_workload.hpp"
#include "sim/config/strategy.hpp"
#include "sim/scenario/text.hpp"
#include "sim/scenario/units.hpp"


namespace dtsim::sim {

RunLength run_length(const RunConfig& c, int usable_training_samples) {
  RunLength length;
  // At least one: a federated round can draw more samples than one pass (many clients, small shards).
  length.steps_per_epoch = std::max<int64_t>(1, usable_training_samples / c.global_batch());
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
  spec.init = c.init;
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
  if (sc.warmup_start_base) s.warmup_start_lr = c.lr;
  else s.warmup_start_lr = sc.warmup_start_lr;
  s.decay = sc.decay;
  s.step_every = std::max<int64_t>(1, epochs_to_steps(sc.decay_every_epochs));
  s.step_gamma = sc.decay_gamma;
  s.total_steps = length.total_steps;
  // Only cosine decay reads it; under another decay it is reported as having no effect (ignored_keys.cpp),
  // not refused.
  s.min_lr = sc.decay == models::LrDecay::Cosine ? sc.min_lr : 0.0;
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

namespace {

double optimizer_state_bytes(const RunConfig& c) {
  switch (c.optimizer.kind) {
    case models::OptimizerKind::Sgd: return c.momentum > 0 ? 4.0 : 0.0;
    case models::OptimizerKind::Lars: return 4.0;  // momentum
    case models::OptimizerKind::Adam:
    case models::OptimizerKind::AdamW:
    case models::OptimizerKind::Lamb: return 8.0;
  }
  return 0.0;
}

std::string gigabytes(double bytes) { return format_quantity(bytes, Dimension::Bytes); }

// The network's weights, gradients, optimizer state and one batch's kept activations against each kind of
// GPU in the cluster, on the simulated GPU (whatever backend computes the numerics).
void check_memory(const RunConfig& c, const models::Network<float>& network, const KeyOrigins& at) {
  const models::Workload costs = models::network_workload(network, network.description());
  const models::MemorySetup setup = run_memory_setup(c);
  const models::MemoryBreakdown need = models::memory_per_gpu(costs, setup);
  // With node groups every GPU is a group's; the [gpu] one is on no node and is not checked.
  std::vector<const GpuSpec*> gpus;
  if (c.layout.groups.empty()) gpus.push_back(&c.gpu);
  for (const NodeGroup& g : c.layout.groups) gpus.push_back(&g.gpu);
  for (const GpuSpec* gpu : gpus) {
    if (need.total() <= gpu->memory) continue;
    const double state = need.total() - need.activations;
    const double per_sample = need.activations / setup.micro_batch;
    const double fitting = per_sample > 0 ? std::floor((gpu->memory - state) / per_sample) : 0;
    at.fail(gpu == &c.gpu ? "gpu.memory" : "cluster.groups",
            "the job needs " + gigabytes(need.total()) + " per GPU (model state " + gigabytes(state) +
                ", activations of " + std::to_string(c.batch_per_worker) + " samples " + gigabytes(need.activations) +
                ") but the " + gpu->name + " has " + gigabytes(gpu->memory),
            fitting >= 1 ? "lower training.batch_per_worker to " + std::to_string(static_cast<long long>(fitting)) +
                               " or less, or use a GPU with more memory"
                         : "use a GPU with more memory or a smaller model");
  }
}

}  // namespace

models::MemorySetup run_memory_setup(const RunConfig& c) {
  models::MemorySetup s;
  s.data_parallel = c.workers;
  s.micro_batch = c.batch_per_worker;
  s.weight_bytes = gpu::storage_bytes(c.precision.weights);
  s.gradient_bytes = gpu::storage_bytes(c.precision.gradients);
  s.activation_bytes = gpu::storage_bytes(c.precision.activations);
  s.optimizer_bytes = optimizer_state_bytes(c);
  s.zero_stage = c.strategy == Strategy::Sync ? c.sync.zero_stage : 0;
  s.optimizer_kernels = c.optimizer_kernels;
  return s;
}

bool attention_table_applies(const GpuSpec& gpu, MathMode math) {
  return math == MathMode::Bf16 && gpu.attention_table != nullptr;
}

models::MatmulUnit matmul_unit(const GpuSpec& gpu, MathMode math, MatmulModel matmul) {
  models::MatmulUnit u;
  if (matmul != MatmulModel::Tiles) return u;
  u.multiprocessors = gpu.multiprocessors;
  u.tile_m = gpu.matmul_tile_m;
  u.tile_n = gpu.matmul_tile_n;
  u.large_product_flops = gpu.achievable(math);
  u.memory_bandwidth = gpu.memory_bandwidth_for(matmul);
  if (attention_table_applies(gpu, math)) u.attention = gpu.attention_table;
  return u;
}

models::DeviceRates run_device_rates(const GpuSpec& gpu, MathMode math, MatmulModel matmul,
                                     const models::KernelIssue& issue) {
  return {gpu.sustained(math), gpu.memory_bandwidth_for(matmul), gpu.launch_overhead, matmul_unit(gpu, math, matmul),
          issue};
}

// A compressor that would never compress: refused at the key that keeps it off (it would only look applied).
static void check_compression_reach(const RunConfig& c, const RunLength& length, const models::Network<float>& network,
                                    const KeyOrigins& at) {
  const models::CompressionSettings cs = c.compression.resolved(length.steps_per_epoch);
  size_t largest = 0;
  for (const models::ParamTensor& t : network.param_tensors()) largest = std::max(largest, t.size);
  if (cs.min_tensor_size > largest)
    at.fail("compression.min_tensor_size",
            "every tensor of the model is smaller (the largest holds " + std::to_string(largest) +
                " values), so nothing would be compressed",
            "lower it to at most " + std::to_string(largest) + ", or set compression.kind = none");
  // Federated learning counts compression's start in rounds (0 to fl.rounds − 1).
  if (c.strategy == Strategy::Federated) {
    const models::CompressionSettings by_round = c.compression.resolved(1);
    if (by_round.start_step >= c.fl.rounds)
      at.fail(by_round.start_step > c.compression.settings.start_step ? "compression.start_epoch" : "compression.start_step",
              "the run has " + std::to_string(c.fl.rounds) + " rounds, so compression (from round " +
                  std::to_string(by_round.start_step) + ", counting from 0) would never start",
              "start it earlier, or set compression.kind = none");
    return;
  }
  // Gradient steps, the ones compression applies to, in the strategies that count them as the run does.
  if (c.strategy != Strategy::Sync && c.strategy != Strategy::Local) return;
  int64_t gradient_steps = length.total_steps;
  if (c.strategy == Strategy::Local && c.sync.local_steps > 1)
    gradient_steps = std::min<int64_t>(gradient_steps, c.sync.sync_until_step);
  if (gradient_steps > 0 && cs.start_step >= gradient_steps)
    at.fail(cs.start_step > c.compression.settings.start_step ? "compression.start_epoch" : "compression.start_step",
            "the run averages gradients in its first " + std::to_string(gradient_steps) +
                " steps only, so compression (from step " + std::to_string(cs.start_step) + ") would never start",
            "start it earlier, or set compression.kind = none");
}

size_t check_numerics(const RunConfig& c, const RunLength& length, const models::Dataset& train,
                      const KeyOrigins& at) {
  // The span transformer is no Network: its model, memory and shards are checked by check_qa_run (qa_setup.hpp).
  const bool network_model = !models::architecture_descriptor(c.arch).span_transformer;
  std::unique_ptr<models::Network<float>> network;
  if (network_model) {
    try {
      network = models::make_network<float>(network_spec(c, train));
    } catch (const std::invalid_argument& e) {
      at.fail("model.arch", e.what());
    }
  }
  // In a proxy run the simulated GPUs hold the named workload, not this small model.
  if (network && !c.workload.proxy) check_memory(c, *network, at);
  // Parameter-server shards hold whole tensors: found here, so that `dtsim check` refuses what the run would.
  if (network && reads_section(c.strategy, "ps")) {
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
  if (network && c.compression.active()) check_compression_reach(c, length, *network, at);
  try {
    models::validate(optimizer_settings(c));
  } catch (const std::invalid_argument& e) {
    // The schema has checked each value alone, so what the optimizer refuses is a rule across its keys
    // (Nesterov without momentum): blamed where the user set one of them, the command line first.
    at.fail_at_set({"training.nesterov", "training.momentum", "training.optimizer"}, e.what(),
                   c.nesterov ? "set training.momentum above 0 (e.g. 0.9), or training.nesterov = false" : "");
  }
  const models::LrScheduleSettings schedule_set = schedule_settings(c, length);
  if (schedule_set.warmup_start_lr) {
    models::LrScheduleSettings plain = schedule_set;
    plain.warmup_start_lr.reset();
    try {
      const double peak = models::LrSchedule(plain).peak_lr();
      if (*schedule_set.warmup_start_lr > peak)
        at.fail("training.warmup_start_lr",
                "a warmup that starts at " + short_number(*schedule_set.warmup_start_lr) + " would ramp down to its peak " +
                    short_number(peak) + " (training.lr scaled to the global batch)",
                "start at or below the peak, e.g. training.warmup_start_lr = base");
    } catch (const std::invalid_argument&) {
      // The schedule itself is refused below, at its own key.
    }
  }
  // Cosine decay runs from the warmup's end to the run's last step: a run no longer than its warmup leaves it
  // nothing. Said at the key that made the run that short (a step cap) or the warmup that long.
  if (schedule_set.decay == models::LrDecay::Cosine && schedule_set.total_steps <= schedule_set.warmup_steps) {
    const bool capped = c.max_steps > 0 && c.max_steps == length.total_steps &&
                        static_cast<int64_t>(c.epochs) * length.steps_per_epoch > c.max_steps;
    const std::string what = "the run's " + std::to_string(schedule_set.total_steps) +
                             " steps end within its warmup of " + std::to_string(schedule_set.warmup_steps) +
                             ", leaving cosine decay (which spans the steps the run takes) nothing to decay over";
    if (capped)
      at.fail("training.max_steps", what, "raise it above " + std::to_string(schedule_set.warmup_steps) + ", or shorten the warmup");
    at.fail(c.schedule.warmup_steps > 0 ? "training.warmup_steps" : "training.warmup_epochs", what,
            "shorten the warmup, or train for more steps");
  }
  try {
    const models::LrSchedule schedule(schedule_set);
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
  return network ? network->num_params() : 0;
}

}  // namespace dtsim::sim
