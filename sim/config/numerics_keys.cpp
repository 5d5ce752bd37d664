// Scenario keys: what is computed (model, data, training, precision).
#include "models/architectures.hpp"
#include "models/optimizer.hpp"
#include "models/lr_schedule.hpp"
#include "models/mixed_precision.hpp"
#include "models/loss_scaler.hpp"
#include "sim/config/schema.hpp"
#include "sim/config/strategy.hpp"
#include "sim/scenario/key_builders.hpp"

namespace dtsim::sim {

using namespace key_builders;

void add_numerics_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      // ---- compute ----------------------------------------------------------------------------------------
      choice("compute.device", "auto", {"auto", "cpu", "cuda"},
             "Where the real numerics run: auto = CUDA when a GPU is usable, else the CPU reference"),
      choice("compute.math", "fp32", {"fp32", "tf32", "bf16"},
             "Which GPU peak the simulated kernels are charged at (see [precision] for the emulated formats)"),
      // ---- model ------------------------------------------------------------------------------------------
      choice("model.arch", "mlp", models::architecture_names(),
             "Network: logreg = multinomial logistic regression, mlp = fully connected, lenet = LeNet-5 style "
             "CNN, cnn = two 5x5 conv layers (32, 64) with pooling and FC 1024"),
      int_list("model.hidden", "256,128", between(1, 1e6), "Hidden layer widths of the MLP, comma separated"),
      choice("model.activation", "relu", models::activation_names(), "Activation of the MLP's hidden layers"),
      // ---- data -------------------------------------------------------------------------------------------
      choice("data.dataset", "fashion-mnist", {"fashion-mnist", "synthetic", "synthetic-iid"},
             "Training and test data: Fashion-MNIST, or FedProx Synthetic(alpha, beta) and its IID variant"),
      text("data.path", "/usr/share/datasets/fashion-mnist",
           "Folder holding Fashion-MNIST's files (Debian package dataset-fashion-mnist)"),
      integer("data.train_samples", "0", at_least(0), "Use only the first N training samples; 0 = all"),
      integer("data.test_samples", "0", at_least(0), "Evaluate on the first N test samples only; 0 = all"),
      real("data.synthetic_alpha", "0", at_least(0), "Synthetic: how much the local models differ between devices"),
      real("data.synthetic_beta", "0", at_least(0), "Synthetic: how much the local input distributions differ"),
      integer("data.synthetic_devices", "30", between(1, 100000), "Synthetic: number of devices generating data"),
      choice("data.partition", "none", {"none", "iid", "dirichlet", "labels", "lognormal", "groups", "natural"},
             "How training samples are split over workers: none = one global shuffled order cut into per-worker "
             "shards every step (equals centralised training); iid, dirichlet (over labels), labels (k labels per "
             "worker), lognormal (quantity skew), groups (label groups), natural (synthetic devices)"),
      real("data.dirichlet_alpha", "0.5", positive(), "Dirichlet partition: concentration (small = skewed labels)"),
      integer("data.labels_per_worker", "2", between(1, 1000), "Labels partition: distinct labels per worker"),
      real("data.lognormal_sigma", "1", at_least(0), "Lognormal partition: sigma of the shard-size distribution"),
      text("data.label_groups", "", "Groups partition: 'name:labels:workers' items separated by ';', e.g. "
           "'medical:0-4:4; finance:5-9:4' (label sets must be disjoint)", true),
      // ---- training ---------------------------------------------------------------------------------------
      choice("training.strategy", "sync", strategy_names(),
             "Training strategy: sync = synchronous data parallel (gradients allreduced every step); local = local "
             "SGD (model averaging every H steps); async-ps = asynchronous parameter server; federated = rounds "
             "of client training and server aggregation"),
      integer("training.batch_per_worker", "32", between(1, 1e6), "Mini-batch size on each worker"),
      integer("training.epochs", "3", between(1, 100000), "Passes over the training set"),
      integer("training.max_steps", "0", at_least(0), "Stop after this many optimizer steps; 0 = no limit"),
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
      real("training.warmup_epochs", "0", at_least(0), "Linear warmup length in epochs (or use warmup_steps)"),
      integer("training.warmup_steps", "0", at_least(0), "Linear warmup length in optimizer steps"),
      choice("training.decay", "constant", models::lr_decay_names(), "LR decay after warmup"),
      real("training.decay_every_epochs", "30", positive(), "Step decay: multiply by decay_gamma every N epochs"),
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
