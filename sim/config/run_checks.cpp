#include "sim/config/run_checks.hpp"

#include <filesystem>
#include <string>
#include <vector>

#include "models/input_file.hpp"
#include "models/workload/catalog.hpp"
#include "sim/scenario/keys.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "sim/config/cluster_layout.hpp"
#include "sim/config/collective_algorithms.hpp"
#include "sim/config/strategy.hpp"
#include "sim/scenario/text.hpp"

namespace dtsim::sim {
namespace {

// The data against the model and the cluster.
void check_data(const RunConfig& c, const KeyOrigins& at) {
  const bool transformer = models::architecture_descriptor(c.arch).span_transformer;
  if (transformer && c.data.dataset != DatasetSource::Qa)
    at.fail("model.arch",
            std::string("the transformer answers questions over token sequences, but data.dataset is '") +
                to_string(c.data.dataset) + "'",
            "set data.dataset = qa, or use a classifier (logreg, mlp, lenet, cnn) with this data");
  if (!transformer && c.data.dataset == DatasetSource::Qa)
    at.fail("data.dataset",
            std::string("the QA task needs model.arch = transformer (a span-extraction model), not '") +
                models::to_string(c.arch) + "'",
            "set model.arch = transformer");
  if (c.data.synthetic() && models::architecture_descriptor(c.arch).needs_images)
    at.fail("model.arch",
            std::string("'") + models::to_string(c.arch) + "' needs images, but data.dataset is '" +
                to_string(c.data.dataset) + "'",
            "use logreg or mlp with synthetic data");
  if (c.data.partition == PartitionKind::Groups) {
    int workers = 0;
    for (const LabelGroup& g : c.data.label_groups) workers += g.workers;
    if (workers != c.workers)
      at.fail("data.label_groups",
              "the groups hold " + std::to_string(workers) + " workers but cluster.workers is " +
                  std::to_string(c.workers),
              "make the worker counts add up");
  }
  if (static_cast<int64_t>(c.workers) * c.batch_per_worker > (int64_t{1} << 31))
    at.fail("training.batch_per_worker", "global batch (workers × batch_per_worker) is too large");
}

// The shapes, as the platform builder will resolve them, with the server hosts the strategy adds.
void check_cluster(const RunConfig& c, const KeyOrigins& at) {
  try {
    const auto plan = topology::plan_nodes(c.layout, c.workers, c.gpu, MathMode::Fp32);
    topology::check_shapes(c.layout, plan, server_hosts(c.strategy, c.ps.servers));
    // A failure of a node the cluster does not have (the parser knows only the worker count).
    const int nodes = static_cast<int>(plan.size());
    for (const FaultEvent& e : c.heterogeneity.faults.events)
      if (e.target == FaultTarget::Node && e.index >= nodes)
        at.fail("faults.events", "node " + std::to_string(e.index) + " does not exist: the cluster has " +
                                     std::to_string(nodes) + (nodes == 1 ? " node" : " nodes"),
                "nodes are numbered from 0 to " + std::to_string(nodes - 1) + " (" +
                    (c.layout.groups.empty() ? "cluster.workers / cluster.gpus_per_node" : "cluster.groups' nodes") +
                    ")");
  } catch (const topology::ShapeError& e) {
    at.fail(e.key(), e.what(), e.hint());
  }
}

// Training strategies that react to failures: synchronous DP (timeouts, elastic membership or restarts), the
// parameter server (a lost worker is tolerated) and federated learning (a lost client is a straggler of its
// round); a scenario that combines [faults] with another strategy is refused up front rather than aborting.
void check_faults(const RunConfig& c, const KeyOrigins& at) {
  const StrategyDescriptor& strategy = strategy_descriptor(c.strategy);
  if (!c.heterogeneity.faults.events.empty() && !strategy.survives_faults)
    at.fail("faults.events", std::string("training.strategy '") + strategy.name + "' cannot survive failures yet",
            "it has no timeout, elastic membership or restart; leave [faults] empty with this strategy");
}

void check_parameter_server(const RunConfig& c, const KeyOrigins& at) {
  if (!reads_section(c.strategy, "ps")) return;
  // The bound's proof counts one update per gradient; with softsync a gradient can wait in a shard's buffer
  // for gradients that the bound itself holds back.
  if (c.ps.bounded() && c.ps.gradients_per_update > 1)
    at.fail("ps.staleness_bound", "bounded staleness cannot be combined with ps.gradients_per_update > 1",
            "use one of them: set ps.staleness_bound = -1 or ps.gradients_per_update = 1");
  // The server tells a worker that is cut off by its host's failure; a link that fails under a live worker
  // would need timeouts on both sides, which this server does not model.
  const auto& events = c.heterogeneity.faults.events;
  if (std::any_of(events.begin(), events.end(), [](const FaultEvent& e) { return e.target == FaultTarget::Link; }))
    at.fail("faults.events", "async-ps survives worker and node failures, not link failures",
            "fail the worker ('worker N down at …') instead of its link");
}

void check_federated(const RunConfig& c, const KeyOrigins& at) {
  if (!reads_section(c.strategy, "fl")) return;
  const FlConfig& fl = c.fl;
  const int64_t k = fl.requested_clients_per_round;
  if (k > c.workers)
    at.fail("fl.clients_per_round",
            std::to_string(k) + " clients per round but only " + std::to_string(c.workers) + " clients (cluster.workers)",
            "lower it, or 0 for every client");
  if (fl.prox_mu > 0 && fl.algorithm != models::FlAlgorithm::FedProx)
    at.fail("fl.prox_mu", "only FedProx has a proximal term", "set fl.algorithm = fedprox, or prox_mu = 0");
  // The clients a round selects (with overcommit) and how many of them are stragglers, as the round planner
  // counts them: when dropping the stragglers leaves none, no round would ever update the model.
  if (fl.straggler_policy == StragglerPolicy::Drop && fl.straggler_fraction > 0.0) {
    const double wanted = std::ceil(static_cast<double>(fl.clients_per_round) * (1.0 + fl.overcommit) - 1e-9);
    const int64_t selected = static_cast<int64_t>(std::min<double>(wanted, c.workers));
    const int64_t kept = std::llround(static_cast<double>(selected) * (1.0 - fl.straggler_fraction));
    if (kept == 0)
      at.fail("fl.straggler_fraction",
              "makes every one of a round's " + std::to_string(selected) +
                  " clients a straggler, and fl.straggler_policy = drop drops them all: no round would update the model",
              "lower it, or set fl.straggler_policy = partial");
  }
  if (!fl.local_steps_by_client.empty()) {
    if (static_cast<int>(fl.local_steps_by_client.size()) != c.workers)
      at.fail("fl.local_steps_by_client",
              std::to_string(fl.local_steps_by_client.size()) + " values for " + std::to_string(c.workers) + " clients",
              "give one local step count per client (cluster.workers)");
    if (std::any_of(fl.local_steps_by_client.begin(), fl.local_steps_by_client.end(), [](int64_t v) { return v < 1; }))
      at.fail("fl.local_steps_by_client", "every client needs at least one local step");
  } else if (fl.local_steps == 0 && fl.local_epochs == 0) {
    at.fail("fl.local_epochs", "no local work: local_epochs and local_steps are both 0", "set one of them");
  }
  if (fl.straggler_fraction > 0 && fl.straggler_policy == StragglerPolicy::Partial && fl.local_steps == 0 &&
      fl.local_steps_by_client.empty() && fl.local_epochs < 2)
    at.fail_at_set({"fl.local_epochs", "fl.straggler_policy", "fl.straggler_fraction"},
                   "partial stragglers run 1 to E-1 local epochs, so E (fl.local_epochs) must be at least 2");
  if (fl.straggler_fraction > 0 && fl.straggler_policy == StragglerPolicy::Partial && fl.local_steps == 1 &&
      fl.local_steps_by_client.empty())
    at.fail_at_set({"fl.local_steps", "fl.straggler_policy", "fl.straggler_fraction"},
                   "partial stragglers run 1 to τ-1 local steps, so τ (fl.local_steps) must be at least 2");
  // The same per client: a straggler with one local step has no part of it to run (it is dropped).
  if (fl.straggler_fraction > 0 && fl.straggler_policy == StragglerPolicy::Partial &&
      !fl.local_steps_by_client.empty() &&
      std::all_of(fl.local_steps_by_client.begin(), fl.local_steps_by_client.end(), [](int64_t v) { return v == 1; }))
    at.fail_at_set({"fl.local_steps_by_client", "fl.straggler_policy", "fl.straggler_fraction"},
                   "partial stragglers run 1 to τ-1 local steps, and every client's τ (fl.local_steps_by_client) is 1");

  // What the federated clients do not model.
  if (c.optimizer.kind != models::OptimizerKind::Sgd)
    at.fail("training.optimizer", "federated clients train with local SGD (training.lr, momentum, weight_decay)",
            "use sgd; the server's optimizer is fl.server_lr and fl.server_momentum");
  if (c.nesterov) at.fail("training.nesterov", "federated clients use heavy-ball momentum only");
  if (c.precision.loss_scaling != models::LossScaleMode::None)
    at.fail("precision.loss_scaling", "federated clients do not model loss scaling", "use none");
  const ScheduleConfig& sch = c.schedule;
  // Blamed on the key that asks for the schedule, not on training.decay whatever was set.
  const char* schedule_key = nullptr;
  if (sch.decay != models::LrDecay::Constant) schedule_key = "training.decay";
  else if (sch.warmup_epochs > 0) schedule_key = "training.warmup_epochs";
  else if (sch.warmup_steps > 0) schedule_key = "training.warmup_steps";
  else if (sch.scaling != models::LrScaling::None) schedule_key = "training.lr_scaling";
  if (schedule_key)
    at.fail(schedule_key, "federated clients use training.lr decayed per round by fl.lr_decay (no step schedule, "
                          "warmup or scaling)",
            "leave training.decay, warmup_* and lr_scaling at their defaults; set fl.lr_decay for a per-round decay");
}

void check_compression(const RunConfig& c, const KeyOrigins& at) {
  const CompressionConfig& cc = c.compression;
  const models::CompressionSettings& m = cc.settings;
  if (m.momentum_correction > 0.0 && c.momentum != 0.0)
    at.fail("compression.momentum_correction",
            "the momentum is applied by each worker before sparsifying; the optimizer's would apply it twice",
            "set training.momentum = 0 (and give its value to compression.momentum_correction)");
  // Signum sends the sign of each worker's own momentum (Bernstein et al. 2018); the optimizer's heavy ball on
  // top of it would be a second momentum that the algorithm does not have.
  // Adam's and LAMB's first moment is such a momentum too, whatever training.momentum says.
  const bool moment_optimizer = c.optimizer.kind == models::OptimizerKind::Adam ||
                                c.optimizer.kind == models::OptimizerKind::AdamW ||
                                c.optimizer.kind == models::OptimizerKind::Lamb;
  if (m.kind == models::CompressorKind::Signum && moment_optimizer)
    at.fail("compression.kind",
            std::string("signum keeps each worker's momentum (compression.signum_momentum) before taking its sign; ") +
                models::to_string(c.optimizer.kind) + "'s first moment would be a second one",
            "use training.optimizer = sgd with training.momentum = 0");
  if (m.kind == models::CompressorKind::Signum && c.momentum != 0.0)
    at.fail("compression.kind",
            "signum keeps each worker's momentum (compression.signum_momentum) before taking its sign; the "
            "optimizer's training.momentum would apply a second one",
            "set training.momentum = 0 (and give its value to compression.signum_momentum)");
  const StrategyDescriptor& traits = strategy_descriptor(c.strategy);
  if (cc.downloads && !reads_section(c.strategy, "fl"))
    at.fail("compression.downloads", std::string("applies to training.strategy = federated, not ") + traits.name,
            "remove it, or set training.strategy = federated");
  if (!cc.active()) return;

  // The asynchronous parameter server and federated learning decode every worker's message on its own (a
  // shard applies each push, the aggregator weighs each upload): there is no group step in which a vote could
  // be taken or a narrow-format sum could overflow, so these two settings would be silently ignored.
  if (!traits.synchronous_group) {
    if (m.majority_vote)
      at.fail("compression.majority_vote",
              std::string("a majority vote needs a synchronous group; ") + traits.name +
                  " decodes each worker's signs on their own",
              "remove it (each message is then plain signs), or use training.strategy = sync");
    if (m.predivide)
      at.fail("compression.predivide",
              std::string("predivide scales a synchronous group's narrow-format sum; ") + traits.name +
                  " has no such sum",
              "remove it, or use training.strategy = sync");
    // DGC's momentum correction accumulates a worker's gradients between synchronous steps; on a federated
    // model update or a stale parameter-server push it would be an algorithm of its own, not DGC.
    if (m.momentum_correction > 0.0)
      at.fail("compression.momentum_correction",
              std::string("momentum correction (DGC) accumulates each worker's gradients between the group's "
                          "synchronous steps; ") + traits.name + " has no such steps",
              "remove it, or use training.strategy = sync");
  }
  // Plain signs decode to ±1: a federated update of sign(Δy) moves every weight by the server's rate a round,
  // whatever the clients' rate (±1 a round at fl.server_lr = 1, which blows up at once).
  if (reads_section(c.strategy, "fl") &&
      (m.kind == models::CompressorKind::Sign || m.kind == models::CompressorKind::Signum) && c.fl.server_lr >= 1.0)
    at.fail_at_set({"compression.kind", "fl.server_lr"},
                   std::string(models::to_string(m.kind)) + " uploads decode to ±1 per weight, so at fl.server_lr = " +
                       short_number(c.fl.server_lr) + " every round moves every weight by that much",
                   "set fl.server_lr to the step a round should take (e.g. 0.001), or use compression.kind = "
                   "scaled-sign, whose sign carries the update's mean magnitude");
  // Secure aggregation masks each upload with pairwise masks that cancel only in the sum of dense vectors of
  // one fixed length; compressed messages (sparse values at client-chosen indices, low-rank factors, signs
  // with a scale) are neither, and revealing which indices a client sends defeats the masking.
  if (reads_section(c.strategy, "fl") && c.fl.secure_aggregation.enabled)
    at.fail("compression.kind", "compressed uploads cannot be securely aggregated (the masks need dense vectors)",
            "set compression.kind = none, or fl.secure_aggregation = false");

  // Synchronous groups compress the gradients as backward leaves them: a loss-scaled one would carry the
  // scale (which changes as the scaler grows or backs off) into the residuals, and an overflowed step's
  // infinities would stay in them for good. (The parameter server unscales before compressing.)
  if (traits.synchronous_group && c.precision.loss_scaling != models::LossScaleMode::None)
    at.fail("precision.loss_scaling", "loss scaling cannot be combined with gradient compression yet",
            "use precision.weights = bf16 (which needs no loss scaling), or compression.kind = none");

  // A restart rolls the model back to a checkpoint, which holds no residuals or half-combined steps.
  if (traits.synchronous_group && !c.heterogeneity.faults.events.empty())
    at.fail("compression.kind", "synchronous training with compression does not survive [faults] events yet",
            "remove faults.events, or set compression.kind = none");
}

// Training allreduces its gradients: the collective algorithm must implement allreduce (all-to-all's
// `direct` does not).
void check_collectives(const RunConfig& c, const KeyOrigins& at) {
  const AlgorithmDescriptor& algorithm = algorithm_descriptor(c.collectives.algorithm);
  if (algorithm.implements(CollectiveKind::Allreduce)) return;
  std::vector<std::string> able;
  for (const Algorithm a : algorithms_implementing(CollectiveKind::Allreduce)) able.emplace_back(to_string(a));
  at.fail("collective.algorithm", std::string("'") + algorithm.name + "' does not implement allreduce, which training runs",
          "use " + models::join_names(able));
}

// ZeRO shards what synchronous data parallelism keeps whole on every worker; it has no meaning for local SGD's
// diverging replicas, and the compressed gradients and failure recovery are not built on its collectives.
void check_zero(const RunConfig& c, const KeyOrigins& at) {
  if (c.sync.zero_stage == 0 || !reads_section(c.strategy, "sync")) return;
  if (c.strategy != Strategy::Sync)
    at.fail("sync.zero_stage", std::string("ZeRO shards one model, but ") + to_string(c.strategy) +
                                   " keeps a replica per worker",
            "use training.strategy = sync, or sync.zero_stage = 0");
  if (c.compression.active())
    at.fail("sync.zero_stage", "ZeRO with gradient compression is not simulated",
            "set compression.kind = none, or sync.zero_stage = 0");
  if (!c.heterogeneity.faults.events.empty())
    at.fail("sync.zero_stage", "ZeRO with failures is not simulated", "leave [faults] empty, or sync.zero_stage = 0");
  // A timing-only run gathers and reduce-scatters every micro-batch (sim/strategies/timing/sync_timing.cpp);
  // training with numerics does not shard the weights between micro-batches.
  if (c.sync.zero_stage == 3 && c.sync.accumulation_steps > 1 && !c.workload.active())
    at.fail("sync.zero_stage", "stage 3 with gradient accumulation is not simulated (each micro-batch would gather "
            "the weights again)", "set sync.accumulation_steps = 1, or sync.zero_stage = 1 or 2");
}

// What a timing-only run of each strategy simulates (sim/strategies/timing/): sync, local SGD (post-local
// too), async-ps, and federated rounds planned without a dataset.
void check_timing_only_strategy(const RunConfig& c, const KeyOrigins& at) {
  if (!c.heterogeneity.faults.events.empty())
    at.fail("faults.events", "a timing-only run of a workload does not simulate failures",
            "leave [faults] empty, or remove workload.name to train a built-in model through them");
  if (c.strategy == Strategy::Local && c.sync.local_steps == 1)
    at.fail("local.local_steps", "local SGD averaging after every step is synchronous data parallelism",
            "use training.strategy = sync, or local.local_steps of 2 or more");
  if (c.strategy != Strategy::Federated) return;
  if (c.fl.local_steps == 0 && c.fl.local_steps_by_client.empty())
    at.fail("fl.local_steps", "a timing-only run of a workload has no dataset to count local epochs in",
            "set fl.local_steps (or fl.local_steps_by_client)");
}

// A run of a catalog workload: timing-only (sync, async-ps or federated on one kind of GPU) or proxy (any strategy;
// compression sends the workload's values at the small model's compressed bytes per value, a restart reads
// back the workload's checkpoint), on a GPU whose memory bandwidth is known (the roofline needs it).
void check_workload(const RunConfig& c, const KeyOrigins& at) {
  if (!c.workload.active()) return;
  const std::string dir = default_workload_dir();
  if (models::is_catalog_miss(c.workload.name, dir)) {
    const std::vector<std::string> names = models::catalog_names(dir);
    const std::string near = suggest_among(c.workload.name, names);
    at.fail("workload.name", "'" + c.workload.name + "' is not a catalog workload or an existing .json file",
            near.empty() ? "use one of " + models::join_names(names, ", ", " or ") + ", or a path"
                         : "did you mean '" + near + "'?");
  }
  // A FIFO would block the reader, a folder or a device is no workload: refused here, at the key.
  const std::string file = models::workload_file(c.workload.name, dir);
  if (const models::InputFileProblem problem = models::input_file_problem(file))
    at.fail("workload.name", "'" + file + "' " + problem.reason,
            problem.kind == models::InputFileProblem::Kind::Missing ? "check the path, or name a catalog workload"
                                                                     : "name a workload's .json file or a catalog workload");
  // A proxy run keeps the strategy's own actors, so every strategy can charge the workload's costs.
  if (c.workload.timing_only()) check_timing_only_strategy(c, at);
  if (c.workload.timing_only() && !c.layout.groups.empty())
    at.fail("cluster.groups", "a timing-only run of a workload does not support node groups yet",
            "describe the cluster with cluster.workers and cluster.gpus_per_node");
  if (c.gpu.memory_bandwidth <= 0)
    at.fail("gpu.memory_bandwidth", "the workload's per-layer roofline needs the GPU's memory bandwidth",
            "set gpu.memory_bandwidth (and gpu.launch_overhead), or use a profile that gives them");
}

}  // namespace

void check_run_config(const RunConfig& c, const KeyOrigins& at, ConfigUse use) {
  check_workload(c, at);
  check_zero(c, at);
  check_data(c, at);
  check_cluster(c, at);
  check_faults(c, at);
  check_parameter_server(c, at);
  check_federated(c, at);
  check_compression(c, at);
  if (use == ConfigUse::Training) check_collectives(c, at);
}

}  // namespace dtsim::sim
