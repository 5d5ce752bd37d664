#include "sim/config/numerics_config.hpp"

#include <cmath>
#include <cstdlib>

#include "gpu/backend.hpp"
#include "models/architectures.hpp"
#include "models/mixed_precision.hpp"
#include "sim/config/choice.hpp"
#include "sim/config/run_config.hpp"
#include "sim/config/schema.hpp"
#include "sim/config/strategy.hpp"
#include "sim/scenario/key_builders.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/text.hpp"

namespace dtsim::sim {
namespace {

OptimizerConfig make_optimizer_config(const Scenario& s) {
  OptimizerConfig o;
  o.kind = choice_value(models::optimizer_kind_table(), s, "training.optimizer");
  o.beta1 = s.real("training.beta1");
  o.beta2 = s.real("training.beta2");
  o.eps = s.real("training.eps");
  o.trust_coefficient = s.real("training.trust_coefficient");
  return o;
}

ScheduleConfig make_schedule_config(const Scenario& s) {
  ScheduleConfig sch;
  sch.base_batch = static_cast<int>(s.integer("training.base_batch"));
  sch.scaling = choice_value(models::lr_scaling_table(), s, "training.lr_scaling");
  sch.warmup_epochs = s.real("training.warmup_epochs");
  sch.warmup_steps = s.integer("training.warmup_steps");
  if (sch.warmup_epochs > 0 && sch.warmup_steps > 0)
    s.fail("training.warmup_steps", "both warmup_epochs and warmup_steps are set", "set only one of them");
  const std::string start = trim(s.text("training.warmup_start_lr"));
  if (start == "base") {
    sch.warmup_start_base = true;
  } else if (!start.empty()) {
    char* end = nullptr;
    const double v = std::strtod(start.c_str(), &end);
    if (end == start.c_str() || *end != '\0' || !std::isfinite(v) || v < 0)
      s.fail("training.warmup_start_lr", "'" + start + "' is neither a learning rate (a number >= 0) nor 'base'",
             "e.g. training.warmup_start_lr = base (the unscaled training.lr, as Goyal et al.), or 0.01");
    sch.warmup_start_lr = v;
  }
  sch.decay = choice_value(models::lr_decay_table(), s, "training.decay");
  sch.decay_every_epochs = s.real("training.decay_every_epochs");
  sch.decay_gamma = s.real("training.decay_gamma");
  sch.min_lr = s.real("training.min_lr");
  return sch;
}

PrecisionConfig make_precision_config(const Scenario& s) {
  PrecisionConfig p;
  p.weights = choice_value(models::number_format_table(), s, "precision.weights");
  p.activations = choice_value(models::number_format_table(), s, "precision.activations");
  p.gradients = choice_value(models::number_format_table(), s, "precision.gradients");
  p.loss_scaling = choice_value(models::loss_scale_mode_table(), s, "precision.loss_scaling");
  p.loss_scale = s.real("precision.loss_scale");
  p.growth_interval = s.integer("precision.growth_interval");
  return p;
}

}  // namespace

void read_numerics_sections(const Scenario& s, RunConfig& c) {
  c.device = gpu::parse_device(trim(s.text("compute.device")));  // a choice key of the same names
  c.math = choice_value(math_mode_table(), s, "compute.math");
  c.matmul = choice_value(matmul_model_table(), s, "compute.matmul");
  c.optimizer_kernels = choice_value(models::optimizer_kernels_table(), s, "compute.optimizer_kernels");
  c.kernel_issue.host_dispatch = s.quantity("compute.host_dispatch");
  c.kernel_issue.cuda_graphs = s.boolean("compute.cuda_graphs");

  c.arch = choice_value(models::architecture_table(), s, "model.arch");
  c.activation = choice_value(models::activation_table(), s, "model.activation");
  c.init = choice_value(models::init_scheme_table(), s, "model.init");
  c.hidden.clear();
  for (const int64_t h : s.int_list("model.hidden")) c.hidden.push_back(static_cast<int>(h));

  c.strategy = choice_value(strategy_table(), s, "training.strategy");
  c.batch_per_worker = static_cast<int>(s.integer("training.batch_per_worker"));
  c.cap_batch_at_shard = s.boolean("training.cap_batch_at_shard");
  c.epochs = static_cast<int>(s.integer("training.epochs"));
  c.max_steps = s.integer("training.max_steps");
  c.lr = s.real("training.lr");
  c.momentum = s.real("training.momentum");
  c.weight_decay = s.real("training.weight_decay");
  c.nesterov = s.boolean("training.nesterov");
  c.optimizer = make_optimizer_config(s);
  c.schedule = make_schedule_config(s);
  c.precision = make_precision_config(s);
}

// ---- keys ------------------------------------------------------------------------------------------------
using namespace key_builders;

// [compute] and [model]; schema.cpp places them before [data].
void add_model_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      // ---- compute ----------------------------------------------------------------------------------------
      choice("compute.device", "auto", gpu::device_names(),
             "Where the real numerics run: auto = CUDA when a GPU is usable, else the CPU reference"),
      choice("compute.math", "fp32", math_mode_table().names(),
             "Which GPU peak the simulated kernels are charged at (see [precision] for the emulated formats)"),
      choice("compute.matmul", "roofline", matmul_model_table().names(),
             "How simulated matrix products are timed: roofline = FLOPs at the peak × gpu.efficiency; tiles = from "
             "each product's shape, in waves of tiles over gpu.multiprocessors at gpu.achievable_<math> "
             "(docs/compute.md)"),
      choice("compute.optimizer_kernels", "fused", models::optimizer_kernels_table().names(),
             "How the simulated optimizer step runs: fused = one pass over the gradient, weights and state per "
             "trained layer (PyTorch fused=True, Apex/DeepSpeed FusedAdam); foreach = PyTorch's multi-tensor "
             "default, one full pass per arithmetic step of the update (Adam: 8 kernels, about 2.7x the bytes "
             "in bf16 with master weights)"),
      quantity("compute.host_dispatch", Dimension::Time, "0s", between(0, 1e-3),
               "Framework work on the host per simulated kernel before its launch (an eager framework's dispatch; "
               "a framework profile sets it): a pass takes the longer of its GPU time and kernels x "
               "(gpu.launch_overhead + this); 0 = the host always keeps ahead"),
      boolean("compute.cuda_graphs", "false",
              "Replay each step's kernels from a captured CUDA graph: no per-kernel launch or host dispatch is "
              "charged, only the kernels' work (a lower bound)"),
      // ---- model ------------------------------------------------------------------------------------------
      choice("model.arch", "mlp", models::architecture_names(),
             "Network: logreg = multinomial logistic regression, mlp = fully connected, lenet = LeNet-5 style "
             "CNN (first conv padded, 61,706 parameters on 28x28), lenet-nopad = the same unpadded as in federated "
             "benchmarks (44,426), cnn = two 5x5 conv layers (32, 64) with pooling and FC 1024"),
      int_list("model.hidden", "256,128", between(1, 1e6), "Hidden layer widths of the MLP, comma separated"),
      choice("model.activation", "relu", models::activation_names(), "Activation of the MLP's hidden layers"),
      choice("model.init", "he-uniform", models::init_scheme_names(),
             "How weights start: he-uniform = U(±sqrt(6/fan_in)) with zero biases; torch-default = weights and "
             "biases U(±1/sqrt(fan_in)), PyTorch's default for Linear and Conv2d layers, which published "
             "PyTorch benchmarks train from"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

// [training] and [precision].
void add_training_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      // ---- training ---------------------------------------------------------------------------------------
      choice("training.strategy", "sync", strategy_names(),
             "Training strategy: sync = synchronous data parallel (gradients allreduced every step); local = local "
             "SGD (model averaging every H steps); async-ps = asynchronous parameter server; federated = rounds "
             "of client training and server aggregation"),
      integer("training.batch_per_worker", "32", between(1, 1e6), "Mini-batch size on each worker"),
      boolean("training.cap_batch_at_shard", "false",
              "A worker whose data shard is smaller than its batch takes the whole shard as its batch (one "
              "full-batch step per pass; compute is charged for the smaller batch) instead of wrapping into "
              "its next pass, which repeats samples within a batch. A batch at least the largest shard makes "
              "every step a full-batch step. Needs a data.partition"),
      integer("training.epochs", "3", between(1, 100000), "Passes over the training set"),
      integer("training.max_steps", "0", at_least(0),
              "Stop after this many optimizer steps; 0 = no limit. It is the run's length: a cosine decay spans the "
              "steps the run takes"),
      choice("training.optimizer", "sgd", models::optimizer_kind_names(),
             "Optimizer: sgd (momentum, PyTorch semantics), adam, adamw (decoupled decay), lars, lamb "
             "(layer-wise trust ratios)"),
      real("training.lr", "0.05", positive(100), "Learning rate at training.base_batch (before scaling)"),
      real("training.momentum", "0.9", fraction_closed_open(), "Momentum coefficient (sgd, lars)"),
      boolean("training.nesterov", "false", "Use Nesterov momentum (sgd)"),
      real("training.weight_decay", "0", fraction_closed_open(), "Weight decay (L2; decoupled for adamw)"),
      real("training.beta1", "0.9", fraction_closed_open(), "First-moment decay (adam, adamw, lamb)"),
      real("training.beta2", "0.999", fraction_closed_open(), "Second-moment decay (adam, adamw, lamb)"),
      real("training.eps", "1e-8", positive(1), "Denominator epsilon (adam, adamw, lamb)"),
      real("training.trust_coefficient", "0.001", positive(1), "LARS trust coefficient eta"),
      integer("training.base_batch", "0", at_least(0),
              "Global batch that training.lr is given for; 0 = the actual global batch (no scaling)"),
      choice("training.lr_scaling", "none", models::lr_scaling_names(),
             "Scale the lr from base_batch to the global batch: linear (Goyal et al.) or sqrt"),
      real("training.warmup_epochs", "0", between(0, 1e6), "Linear warmup length in epochs (or use warmup_steps)"),
      integer("training.warmup_steps", "0", between(0, 1e15), "Linear warmup length in optimizer steps"),
      text("training.warmup_start_lr", "",
           "Rate of the warmup's first step: unset = peak / warmup steps; base = the unscaled training.lr (Goyal et "
           "al.'s gradual warmup from the small-batch rate); or a rate in [0, the peak]",
           true),
      choice("training.decay", "constant", models::lr_decay_names(), "LR decay after warmup"),
      real("training.decay_every_epochs", "30", positive(1e6), "Step decay: multiply by decay_gamma every N epochs"),
      real("training.decay_gamma", "0.1", fraction_open_closed(), "Step decay factor"),
      real("training.min_lr", "0", at_least(0), "Cosine decay: the lr reached at the last step"),
      // ---- precision ----------------------------------------------------------------------------------------
      choice("precision.weights", "fp32", models::number_format_names(),
             "Format of the weights the forward/backward pass sees (the optimizer keeps fp32 master weights)"),
      choice("precision.activations", "fp32", models::number_format_names(), "Format activations are stored in"),
      choice("precision.gradients", "fp32", models::number_format_names(),
             "Format gradients are stored and exchanged in (also sets their size on the wire)"),
      choice("precision.loss_scaling", "none", models::loss_scale_mode_names(),
             "Loss scaling: static multiplies the loss by loss_scale; dynamic also halves it on overflow "
             "(skipping the step) and doubles it after growth_interval good steps"),
      real("precision.loss_scale", "65536", positive(1e30), "Static scale, or the initial dynamic scale"),
      integer("precision.growth_interval", "2000", between(1, 1e9), "Dynamic scaling: good steps before growing"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
