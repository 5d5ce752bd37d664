#include "sim/scenario/key_registry.hpp"

namespace dtsim::sim {

using namespace key_builders;

std::vector<KeySpec> build_key_registry() {
  return {
      // ---- run ------------------------------------------------------------------------------------------
      text("run.name", "", "Run name used in outputs; defaults to the scenario file name without .ini", true),
      integer("run.seed", "1", between(0, 1e15),
              "Seed of every random stream (data order, initialisation, stragglers, sampling)"),
      // ---- cluster --------------------------------------------------------------------------------------
      integer("cluster.workers", "8", between(1, 65536), "Number of simulated workers (one GPU each)"),
      choice("cluster.topology", "star", {"star"}, "Network topology: star = every worker on one non-blocking switch"),
      // ---- gpu profile ----------------------------------------------------------------------------------
      text("gpu.profile", "a100-40gb",
           "GPU profile: a name in network_profiles/gpu/ or a path to a .ini file; its fields can be overridden here; "
           "empty = no profile, every gpu key set here",
           true),
      text("gpu.name", "", "Display name of the GPU", true),
      quantity("gpu.peak_fp32", Dimension::FlopRate, "", positive(), "Peak dense FP32 throughput (non-tensor-core)"),
      quantity("gpu.peak_tf32", Dimension::FlopRate, "", positive(), "Peak dense TF32 tensor-core throughput"),
      quantity("gpu.peak_bf16", Dimension::FlopRate, "", positive(), "Peak dense BF16/FP16 tensor-core throughput"),
      quantity("gpu.memory", Dimension::Bytes, "", positive(), "Device memory"),
      real("gpu.efficiency", "", fraction_open_closed(),
           "Sustained fraction of peak reached by training kernels; compute time = FLOPs / (peak × efficiency)"),
      // ---- fabric profile -------------------------------------------------------------------------------
      text("fabric.profile", "ib-hdr-200",
           "Fabric profile: a name in network_profiles/fabric/ or a path to a .ini file; fields can be overridden; "
           "empty = no profile, every fabric key set here",
           true),
      text("fabric.name", "", "Display name of the fabric", true),
      quantity("fabric.bandwidth", Dimension::Bandwidth, "", positive(), "Nominal bandwidth per port and direction"),
      quantity("fabric.link_latency", Dimension::Time, "", at_least(0),
               "Latency of one link (NIC, cable and serialisation), per hop"),
      quantity("fabric.switch_latency", Dimension::Time, "", at_least(0), "Port-to-port latency of one switch"),
      real("fabric.efficiency", "", fraction_open_closed(),
           "Achievable fraction of nominal bandwidth for large messages (protocol and encoding overhead)"),
      // ---- network model ---------------------------------------------------------------------------------
      choice("network.model", "cm02", {"cm02"},
             "SimGrid network model: cm02 = max-min fair sharing, latency + size/bandwidth, calibrated per fabric"),
      boolean("network.crosstraffic", "false",
              "Model the reverse-direction load of each flow (acknowledgements); off matches the alpha-beta model"),
      // ---- compute ----------------------------------------------------------------------------------------
      choice("compute.device", "auto", {"auto", "cpu", "cuda"},
             "Where the real numerics run: auto = CUDA when a GPU is usable, else the CPU reference"),
      choice("compute.math", "fp32", {"fp32", "tf32", "bf16"},
             "Which GPU peak the simulated kernels are charged at (see [precision] for the emulated formats)"),
      // ---- model ------------------------------------------------------------------------------------------
      choice("model.arch", "mlp", {"logreg", "mlp", "lenet", "cnn"},
             "Network: logreg = multinomial logistic regression, mlp = fully connected, lenet = LeNet-5 style "
             "CNN, cnn = two 5x5 conv layers (32, 64) with pooling and FC 1024"),
      int_list("model.hidden", "256,128", between(1, 1e6), "Hidden layer widths of the MLP, comma separated"),
      choice("model.activation", "relu", {"relu", "gelu", "tanh"}, "Activation of the MLP's hidden layers"),
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
      choice("training.strategy", "sync", {"sync"},
             "Training strategy: sync = synchronous data parallel, gradients averaged by allreduce every step"),
      integer("training.batch_per_worker", "32", between(1, 1e6), "Mini-batch size on each worker"),
      integer("training.epochs", "3", between(1, 100000), "Passes over the training set"),
      integer("training.max_steps", "0", at_least(0), "Stop after this many optimizer steps; 0 = no limit"),
      choice("training.optimizer", "sgd", {"sgd", "adam", "adamw", "lars", "lamb"},
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
      choice("training.lr_scaling", "none", {"none", "linear", "sqrt"},
             "Scale the lr from base_batch to the global batch: linear (Goyal et al.) or sqrt"),
      real("training.warmup_epochs", "0", at_least(0), "Linear warmup length in epochs (or use warmup_steps)"),
      integer("training.warmup_steps", "0", at_least(0), "Linear warmup length in optimizer steps"),
      choice("training.decay", "constant", {"constant", "step", "cosine"}, "LR decay after warmup"),
      real("training.decay_every_epochs", "30", positive(), "Step decay: multiply by decay_gamma every N epochs"),
      real("training.decay_gamma", "0.1", fraction_open_closed(), "Step decay factor"),
      real("training.min_lr", "0", at_least(0), "Cosine decay: the lr reached at the last step"),
      // ---- collective -------------------------------------------------------------------------------------
      choice("collective.algorithm", "ring", {"ring"},
             "Allreduce algorithm: ring = reduce-scatter then all-gather around a ring, 2(N-1) steps"),
      // ---- precision ----------------------------------------------------------------------------------------
      choice("precision.weights", "fp32", {"fp32", "bf16", "fp16"},
             "Format of the weights the forward/backward pass sees (the optimizer keeps fp32 master weights)"),
      choice("precision.activations", "fp32", {"fp32", "bf16", "fp16"}, "Format activations are stored in"),
      choice("precision.gradients", "fp32", {"fp32", "bf16", "fp16"},
             "Format gradients are stored and exchanged in (also sets their size on the wire)"),
      choice("precision.loss_scaling", "none", {"none", "static", "dynamic"},
             "Loss scaling: static multiplies the loss by loss_scale; dynamic also halves it on overflow "
             "(skipping the step) and doubles it after growth_interval good steps"),
      real("precision.loss_scale", "65536", positive(1e30), "Static scale, or the initial dynamic scale"),
      integer("precision.growth_interval", "2000", between(1, 1e9), "Dynamic scaling: good steps before growing"),
      // ---- evaluation and output --------------------------------------------------------------------------
      integer("eval.per_epoch", "2", between(1, 100000),
              "Test-set evaluations per epoch (plus one before training); evaluation costs no simulated time"),
      boolean("output.save_model", "false", "Write the final parameters to model.bin (float32, little-endian)"),
  };
}

}  // namespace dtsim::sim
