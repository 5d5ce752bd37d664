#include "sim/config/ignored_keys.hpp"
#include "sim/config/ignored_keys_rules.hpp"

#include <algorithm>
#include <functional>

#include "models/architectures.hpp"
#include "models/compression/registry.hpp"
#include "models/federated.hpp"
#include "models/loss_scaler.hpp"
#include "models/lr_schedule.hpp"
#include "models/name_table.hpp"
#include "models/optimizer.hpp"
#include "models/staleness.hpp"
#include "sim/config/collective_algorithms.hpp"
#include "sim/config/schema.hpp"
#include "sim/config/strategy.hpp"
#include "sim/config/topology_registry.hpp"
#include "sim/scenario/units.hpp"

namespace dtsim::sim {
namespace {

using namespace ignored_key_rules;

// Why `key` has no effect in `config`, or "" when it has one. Rules are tried in order; the first that
// speaks for a key decides (a [fl] key under sync is reported for the strategy, not for the algorithm).
using Rule = std::function<std::string(const std::string& key, const RunConfig& config)>;


template <class Enum>
std::vector<std::string> names_of(const models::NameTable<Enum>& table, const std::vector<Enum>& values) {
  std::vector<std::string> names;
  for (const Enum v : values) names.push_back(table.name(v));
  return names;
}

// [sync], [local], [ps], [fl]: read only by the strategies that own them (config/strategy.cpp).
std::string strategy_sections(const std::string& key, const RunConfig& c) {
  const std::string section = section_of(key);
  const auto owned = strategy_owned_sections();
  if (std::find(owned.begin(), owned.end(), section) == owned.end() || reads_section(c.strategy, section)) return "";
  std::vector<std::string> readers;
  for (const StrategyDescriptor& d : strategy_registry())
    if (reads_section(d.strategy, section)) readers.push_back(d.name);
  return std::string("has no effect with training.strategy = ") + to_string(c.strategy) + " (only " +
         models::join_names(readers, ", ", " and ") + (readers.size() == 1 ? " reads [" : " read [") + section + "])";
}

// Keys outside the strategies' own sections that a strategy's descriptor says it does not read: [collective]
// without a synchronous group (the parameter server and the federated aggregator send point to point), and the
// length and evaluation interval of training counted in steps when a run counts rounds.
std::string strategy_general_keys(const std::string& key, const RunConfig& c) {
  const StrategyDescriptor& d = strategy_descriptor(c.strategy);
  const std::string with = std::string("has no effect with training.strategy = ") + d.name;
  if (section_of(key) == "collective" && !d.synchronous_group) {
    std::vector<std::string> users;
    for (const StrategyDescriptor& s : strategy_registry())
      if (s.synchronous_group) users.push_back(s.name);
    return with + " (only " + models::join_names(users, ", ", " and ") + " combine gradients with collectives)";
  }
  if (d.steps_are_rounds && (key == "training.epochs" || key == "training.max_steps"))
    return with + " (a run lasts fl.rounds rounds of fl.local_epochs or fl.local_steps each)";
  if (d.steps_are_rounds && key == "eval.per_epoch") return with + " (it evaluates every fl.eval_every rounds)";
  return "";
}

// compression.*: nothing applies without a compressor; with one, a setting applies to the kinds whose
// descriptor reads it (models/compression/registry.cpp).
std::string compression_settings(const std::string& key, const RunConfig& c) {
  if (section_of(key) != "compression") return "";
  // Local SGD with H > 1 averages models, not gradients, except in its synchronous start.
  if (averages_models_only(c))
    return "has no effect: local SGD with local.local_steps > 1 averages models, not gradients (compression "
           "applies to the gradient steps before local.sync_until_step)";
  const models::CompressorKind kind = c.compression.settings.kind;
  // (A cast to the format the gradients already have sends the same bytes, but it is not without effect: the
  // group sums in that format, rounding after every addition, where the uncompressed allreduce sums in fp32.)
  if (key == "compression.kind") return "";
  if (kind == models::CompressorKind::None) return "has no effect: compression.kind = none";
  if (key == "compression.indices" && kind == models::CompressorKind::RandomK && c.compression.settings.shared_indices)
    return "has no effect: random-k with shared indices sends no indices (every worker draws them from the seed; "
           "compression.shared_indices = false sends them)";
  const auto setting = compression_setting_of_key(key);
  if (!setting || models::compressor_descriptor(kind).reads(*setting)) return "";
  return std::string("has no effect with compression.kind = ") + models::to_string(kind) + " (it applies to " +
         models::join_names(names_of(models::compressor_kind_table(), models::compressors_reading(*setting))) + ")";
}


// cluster.torus_dims, the fat-tree and dragonfly shapes, the two-sites keys: read by the topologies whose
// descriptor lists them (config/topology_registry.cpp), including a two-sites run's site topology.
std::string topology_settings(const std::string& key, const RunConfig& c) {
  std::vector<std::string> readers;
  for (const TopologyDescriptor& d : topology_registry())
    if (contains(d.keys, key)) readers.push_back(d.name);
  if (readers.empty() || contains(topology_keys(c.layout), key)) return "";
  return std::string("has no effect with cluster.topology = ") + to_string(c.layout.topology) + " (it applies to " +
         models::join_names(readers) + ")";
}

// The secure-aggregation cost constants: only with secure aggregation on.
std::string secure_aggregation_settings(const std::string& key, const RunConfig& c) {
  if (key.rfind("fl.secagg_", 0) != 0 || c.fl.secure_aggregation.enabled) return "";
  return "has no effect with fl.secure_aggregation = false";
}

// fl.prox_mu and the like: read by the federated algorithms whose descriptor says so (models/federated.cpp).
std::string fl_algorithm_settings(const std::string& key, const RunConfig& c) {
  if (section_of(key) != "fl") return "";
  const auto setting = models::fl_setting_table().parse(key.substr(key.find('.') + 1));
  if (!setting || models::fl_algorithm_descriptor(c.fl.algorithm).reads(*setting)) return "";
  std::vector<std::string> readers;
  for (const auto& d : models::fl_algorithm_registry())
    if (d.reads(*setting)) readers.push_back(d.name);
  return std::string("has no effect with fl.algorithm = ") + models::to_string(c.fl.algorithm) + " (it applies to " +
         models::join_names(readers) + ")";
}

// model.hidden: only architectures that take hidden widths; model.activation: only those with hidden layers
// (models/architectures.cpp; the transformer's GELU is qa_model_settings' to report).
std::string architecture_settings(const std::string& key, const RunConfig& c) {
  const auto& d = models::architecture_descriptor(c.arch);
  if (key == "model.activation" && !d.takes_activation && !d.span_transformer) {
    std::vector<std::string> readers;
    for (const auto& a : models::architecture_registry())
      if (a.takes_activation) readers.push_back(a.name);
    return std::string("has no effect with model.arch = ") + d.name + " (it has no hidden layer; it applies to " +
           models::join_names(readers) + ")";
  }
  if (key != "model.hidden") return "";
  if (d.takes_hidden) return "";
  std::vector<std::string> readers;
  for (const auto& a : models::architecture_registry())
    if (a.takes_hidden) readers.push_back(a.name);
  return std::string("has no effect with model.arch = ") + d.name + " (only " + models::join_names(readers) +
         (readers.size() == 1 ? " takes" : " take") + " hidden widths)";
}

// [transformer] and [lora]: read by the span transformer only; lora's settings only with adapters. model.activation:
// the transformer's MLP is GELU whatever it says.
std::string qa_model_settings(const std::string& key, const RunConfig& c) {
  const std::string section = section_of(key);
  const bool transformer = models::architecture_descriptor(c.arch).span_transformer;
  if (key == "model.activation" && transformer)
    return "has no effect with model.arch = transformer (its MLP uses GELU)";
  if (key == "model.init" && transformer)
    return "has no effect with model.arch = transformer (it starts from its own initialisation)";
  if (section != "transformer" && section != "lora") return "";
  if (!transformer)
    return std::string("has no effect with model.arch = ") + models::to_string(c.arch) + " (only transformer reads [" +
           section + "])";
  if (section == "lora" && key != "lora.rank" && !c.qa_model.lora.enabled())
    return "has no effect: lora.rank = 0 (no adapters; the whole transformer trains)";
  return "";
}

// The keys of one dataset: data.path (Fashion-MNIST's files), the synthetic generator's, the QA task's mix.
std::string dataset_settings(const std::string& key, const RunConfig& c) {
  const DataConfig& d = c.data;
  if (key == "data.path" && d.dataset != DatasetSource::FashionMnist)
    return std::string("has no effect with data.dataset = ") + to_string(d.dataset) + " (it is generated, not read)";
  if ((key == "data.synthetic_alpha" || key == "data.synthetic_beta") && d.dataset != DatasetSource::Synthetic)
    return std::string("has no effect with data.dataset = ") + to_string(d.dataset) + " (it applies to synthetic)";
  // The generator's teacher draws one mean per device for every weight and bias of all classes alike, so the
  // mean adds the same amount to every class's logit and no label moves (FedProx's own generator does the
  // same): the devices differ through synthetic_beta and their own draws only.
  if (key == "data.synthetic_alpha")
    return "has no effect on the data: the mean it draws is shared by every class's weights and bias, so it "
           "shifts all logits alike and changes no label (as in FedProx's generator); devices differ through "
           "data.synthetic_beta and their own draws";
  if ((key == "data.train_samples" || key == "data.test_samples") && d.fedprox_synthetic())
    return std::string("has no effect with data.dataset = ") + to_string(d.dataset) +
           " (the generator draws each device's sample count; set data.synthetic_devices)";
  if (key == "data.synthetic_devices" && !d.fedprox_synthetic())
    return std::string("has no effect with data.dataset = ") + to_string(d.dataset) +
           " (it applies to synthetic and synthetic-iid)";
  if (key == "data.qa_medical_fraction" && d.dataset != DatasetSource::Qa)
    return std::string("has no effect with data.dataset = ") + to_string(d.dataset) + " (it applies to qa)";
  if (key == "data.feature_noise" && d.feature_noise > 0 && c.workers < 2)
    return "has no effect with one worker: the noise grows from none on worker 0 to the value on the last";
  return "";
}

// A key that only some values of a choice read: `choice_key`'s value is parsed with `table`, and `key` applies
// when it is one of `readers`.
template <class Enum, class ChoiceOf>
Rule read_by(std::string key, std::string choice_key, const models::NameTable<Enum>& table, std::vector<Enum> readers,
             ChoiceOf choice_of) {
  return [=, &table](const std::string& k, const RunConfig& c) -> std::string {
    if (k != key) return "";
    const Enum chosen = choice_of(c);  // ChoiceOf: RunConfig → Enum
    if (std::find(readers.begin(), readers.end(), chosen) != readers.end()) return "";
    return "has no effect with " + choice_key + " = " + table.name(chosen) + " (it applies to " +
           models::join_names(names_of(table, readers)) + ")";
  };
}

// The numerics module's table of which optimizer, schedule, loss-scaling, staleness rule and data partition
// read which key (the models/ settings structs hold every field for every choice, so this is where it is said).
std::vector<Rule> numerics_rules() {
  using O = models::OptimizerKind;
  using D = models::LrDecay;
  using L = models::LossScaleMode;
  using S = models::StalenessRule;
  using P = PartitionKind;
  const auto optimizer = [](const RunConfig& c) { return c.optimizer.kind; };
  const auto decay = [](const RunConfig& c) { return c.schedule.decay; };
  const auto scaling = [](const RunConfig& c) { return c.schedule.scaling; };
  const auto loss_scaling = [](const RunConfig& c) { return c.precision.loss_scaling; };
  const auto staleness = [](const RunConfig& c) { return c.ps.staleness_lr; };
  const auto partition = [](const RunConfig& c) { return c.data.partition; };
  const auto& parts = partition_kind_table();
  const auto& opt = models::optimizer_kind_table();
  const std::vector<Rule> rules = {
      read_by("training.momentum", "training.optimizer", opt, {O::Sgd, O::Lars}, optimizer),
      read_by("training.nesterov", "training.optimizer", opt, {O::Sgd, O::Lars}, optimizer),
      read_by("training.beta1", "training.optimizer", opt, {O::Adam, O::AdamW, O::Lamb}, optimizer),
      read_by("training.beta2", "training.optimizer", opt, {O::Adam, O::AdamW, O::Lamb}, optimizer),
      read_by("training.eps", "training.optimizer", opt, {O::Adam, O::AdamW, O::Lamb}, optimizer),
      read_by("training.trust_coefficient", "training.optimizer", opt, {O::Lars}, optimizer),
      read_by("training.base_batch", "training.lr_scaling", models::lr_scaling_table(),
              {models::LrScaling::Linear, models::LrScaling::Sqrt}, scaling),
      read_by("training.decay_every_epochs", "training.decay", models::lr_decay_table(), {D::Step}, decay),
      read_by("training.decay_gamma", "training.decay", models::lr_decay_table(), {D::Step}, decay),
      read_by("training.min_lr", "training.decay", models::lr_decay_table(), {D::Cosine}, decay),
      read_by("precision.loss_scale", "precision.loss_scaling", models::loss_scale_mode_table(),
              {L::Static, L::Dynamic}, loss_scaling),
      read_by("precision.growth_interval", "precision.loss_scaling", models::loss_scale_mode_table(), {L::Dynamic},
              loss_scaling),
      read_by("ps.staleness_exponent", "ps.staleness_lr", models::staleness_rule_table(),
              {S::Polynomial, S::Hinge}, staleness),
      read_by("ps.staleness_threshold", "ps.staleness_lr", models::staleness_rule_table(), {S::Hinge}, staleness),
      read_by("data.dirichlet_alpha", "data.partition", parts, {P::Dirichlet}, partition),
      read_by("data.labels_per_worker", "data.partition", parts, {P::Labels}, partition),
      read_by("data.labels_assignment", "data.partition", parts, {P::Labels}, partition),
      read_by("data.lognormal_sigma", "data.partition", parts, {P::Lognormal}, partition),
      read_by("data.label_groups", "data.partition", parts, {P::Groups}, partition),
      read_by("data.partition_file", "data.partition", parts, {P::File}, partition),
      read_by("training.cap_batch_at_shard", "data.partition", parts,
              {P::Iid, P::Dirichlet, P::Labels, P::Lognormal, P::Groups, P::Natural, P::File}, partition),
  };
  return rules;
}

// A timing-only run of a workload reads the cluster, its hardware, the collective and [workload] only; without a
// workload, [workload]'s settings have no effect.
std::string workload_settings(const std::string& key, const RunConfig& c) {
  if (!c.workload.active())
    return section_of(key) == "workload" && key != "workload.name" ? "has no effect without workload.name" : "";
  // A proxy run is a run with numerics: it reads everything such a run reads, and [workload] but its length.
  if (c.workload.proxy)
    return key == "workload.steps" ? "has no effect in a proxy run, whose length is the training's" : "";
  // The seed draws federated rounds and the stragglers' slow workers and slowed steps.
  if ((key == "run.seed" || key == "run.heterogeneity_seed") &&
      (c.strategy == Strategy::Federated || c.heterogeneity.stragglers.chosen_at_random ||
       c.heterogeneity.stragglers.has_random_slowdowns()))
    return "";
  if (read_by_workload_run(key, c.strategy)) return "";
  if (key == "workload.steps")  // read by every timing-only run but a federated one
    return "has no effect: a federated timing-only run lasts fl.rounds rounds";
  return "has no effect in a timing-only run of a workload (workload.name = " + c.workload.name + ")";
}

// training.warmup_start_lr shapes a warmup: without one it has nothing to start. Set empty it is unset (the
// default), which clears a scenario's start from the command line and is never a setting without effect.
std::string warmup_settings(const std::string& key, const RunConfig& c) {
  const bool start_given = c.schedule.warmup_start_base || c.schedule.warmup_start_lr.has_value();
  if (key == "training.warmup_start_lr" && start_given && c.schedule.warmup_epochs <= 0 &&
      c.schedule.warmup_steps <= 0)
    return "has no effect without a warmup (training.warmup_epochs or training.warmup_steps)";
  return "";
}

// Slow workers and slowed steps: a factor without anyone to slow, a slowdown without a chance of it.
std::string straggler_settings(const std::string& key, const RunConfig& c) {
  const StragglerConfig& s = c.heterogeneity.stragglers;
  if (key == "stragglers.slow_factor" && s.slow_workers.empty())
    return "has no effect: no worker is slow (set stragglers.slow_workers or stragglers.slow_fraction)";
  if (key == "stragglers.slow_factor" &&
      std::all_of(s.slow_workers.begin(), s.slow_workers.end(), [](const SlowWorker& w) { return w.own_factor; }))
    return "has no effect: every worker in stragglers.slow_workers carries its own factor ('rank:factor')";
  if (key == "stragglers.step_slowdown" && s.step_probability <= 0.0)
    return "has no effect with stragglers.step_probability = 0 (no step is slowed)";
  if (key == "stragglers.step_probability" && s.step_probability > 0.0 && s.step_slowdown == 1.0)
    return "has no effect with stragglers.step_slowdown = 1 (a slowed step takes as long as any other)";
  return "";
}

// The choices of a federated round that leave nothing to choose: weighting or over-committing the selection
// when every client takes part, a policy for stragglers when none can straggle, a local work count that another
// key overrides (fl.local_steps_by_client, then fl.local_steps, then fl.local_epochs).
std::string fl_round_settings(const std::string& key, const RunConfig& c) {
  if (c.strategy != Strategy::Federated || section_of(key) != "fl") return "";
  const FlConfig& f = c.fl;
  const bool everyone = f.clients_per_round >= c.workers;
  if (key == "fl.sampling" && everyone)
    return "has no effect: every client takes part in every round (fl.clients_per_round = " +
           std::to_string(f.requested_clients_per_round) + "), so no selection is weighted";
  if (key == "fl.overcommit" && everyone)
    return "has no effect: every client is already selected in every round, so none is left to over-commit";
  if (key == "fl.local_steps" && !f.local_steps_by_client.empty())
    return "has no effect: fl.local_steps_by_client gives every client its own step count";
  if (key == "fl.local_epochs" && (!f.local_steps_by_client.empty() || f.local_steps > 0))
    return std::string("has no effect: ") +
           (f.local_steps_by_client.empty() ? "fl.local_steps" : "fl.local_steps_by_client") +
           " sets the local work instead of epochs";
  if (key == "fl.straggler_policy" && f.straggler_fraction <= 0 && f.deadline <= 0 && f.availability_trace.empty())
    return "has no effect: no client straggles (fl.straggler_fraction = 0), misses a deadline (fl.deadline = 0) or "
           "is lost mid-round (no fl.availability_trace)";
  return "";
}

// SimGrid's network model and cross-traffic shape flows; at analytic fidelity a synchronous or local-SGD run's
// collectives (all its traffic) are timed without flows (collectives/executor.cpp), so neither applies.
std::string network_model_settings(const std::string& key, const RunConfig& c) {
  if (key != "network.model" && key != "network.crosstraffic") return "";
  if (c.collectives.fidelity != Fidelity::Analytic) return "";
  if (c.strategy != Strategy::Sync && c.strategy != Strategy::Local) return "";
  return "has no effect with collective.fidelity = analytic, which times the collectives without SimGrid flows "
         "(aggregated and stepwise apply it)";
}

// compute.matmul picks which GPU keys time the products: the roofline reads gpu.efficiency, tiles the SMs,
// the tile, the achievable rates and the streaming fraction of the bandwidth (gpu.efficiency then times nothing).
std::string matmul_model_settings(const std::string& key, const RunConfig& c) {
  const bool tiles_key = key == "gpu.multiprocessors" || key == "gpu.matmul_tile" || key == "gpu.attention_table" ||
                         key == "gpu.memory_efficiency" || key.rfind("gpu.achievable_", 0) == 0;
  if (c.matmul == MatmulModel::Tiles && key == "gpu.efficiency")
    return "has no effect with compute.matmul = tiles, which times products from their shapes at "
           "gpu.achievable_<math>";
  if (c.matmul == MatmulModel::Roofline && tiles_key)
    return "has no effect with compute.matmul = roofline (the default); set compute.matmul = tiles to time products "
           "from their shapes";
  return "";
}

// A captured CUDA graph issues no kernel one by one, so there is no dispatch to wait for; and a graph saves
// nothing where issuing a kernel costs nothing (no launch overhead on any GPU in use, no dispatch).
std::string kernel_issue_settings(const std::string& key, const RunConfig& c) {
  if (key == "compute.host_dispatch" && c.kernel_issue.cuda_graphs)
    return "has no effect with compute.cuda_graphs = true: the graph replays the kernels without the host's dispatch";
  if (key != "compute.cuda_graphs" || c.kernel_issue.host_dispatch > 0) return "";
  for (const GpuSpec* gpu : gpus_in_use(c))
    if (gpu->launch_overhead > 0) return "";
  return "has no effect: gpu.launch_overhead and compute.host_dispatch are 0, so issuing a kernel costs nothing "
         "to save";
}

// An asynchronous parameter server's update costs no simulated time (its shards apply pushes as they come),
// and its workers run no optimizer step of their own: nothing is charged for the optimizer's kernels.
// A framework profile sets gradient buckets, overlap, sharding and optimizer kernels, none of which such a run has.
std::string parameter_server_update_settings(const std::string& key, const RunConfig& c) {
  if ((key != "compute.optimizer_kernels" && key != "framework.profile") || c.strategy != Strategy::AsyncPs) return "";
  return key == "framework.profile"
             ? "has no effect with training.strategy = async-ps, which has no gradient buckets, overlap or sharding, "
               "and whose parameter servers apply updates in no simulated time"
             : "has no effect with training.strategy = async-ps, whose parameter servers apply updates in no "
               "simulated time";
}

// How synchronous training reacts to failures (strategies/sync/sync_recovery.cpp): nothing of it runs without a
// failure (not even the checkpoints, which only a job that watches for failures writes); with one, checkpoints
// and the restart time belong to restart.
std::string fault_reaction_settings(const std::string& key, const RunConfig& c) {
  const SyncConfig& sync = c.sync;
  // Elastic continuation drops a failed worker for good: a repair in the schedule changes nothing (restart
  // waits for it; async-ps and federated learning take it back).
  if (key == "faults.events" && c.strategy == Strategy::Sync && sync.fault_reaction == FaultReaction::Elastic)
    for (const FaultEvent& e : c.heterogeneity.faults.events)
      if (e.up_at != kNever)
        return std::string("has no effect in its repair: '") + to_string(e.target) + " " + std::to_string(e.index) +
               " up at " + format_quantity(e.up_at, Dimension::Time) +
               "': sync.fault_reaction = elastic goes on without a failed worker and never takes it back "
               "(restart waits for it)";
  const bool reaction_key = key == "sync.fault_reaction" || key == "sync.fault_timeout" ||
                            key == "sync.restart_time" || key == "sync.checkpoint_every" ||
                            key == "sync.checkpoint_bandwidth";
  if (!reaction_key) return "";
  if (c.heterogeneity.faults.events.empty()) return "has no effect: no failure is scheduled (faults.events is empty)";
  if (sync.fault_reaction == FaultReaction::Restart || key == "sync.fault_reaction" || key == "sync.fault_timeout")
    return "";
  const std::string reaction =
      std::string("has no effect with sync.fault_reaction = ") + to_string(sync.fault_reaction);
  return reaction + " (only " + to_string(FaultReaction::Restart) +
         (key == "sync.restart_time" ? " waits for the node)" : " writes checkpoints)");
}

// training.lr_scaling scales the rate by global batch ÷ base_batch: with base_batch unset (taken as the global
// batch) or equal to it, the ratio is 1.
std::string lr_scaling_settings(const std::string& key, const RunConfig& c) {
  if (key != "training.lr_scaling" || c.schedule.scaling == models::LrScaling::None) return "";
  if (c.schedule.base_batch <= 0)
    return "has no effect: training.base_batch is unset, so training.lr is the rate of the global batch itself "
           "(set base_batch to the batch the rate was tuned for)";
  if (c.schedule.base_batch == c.global_batch())
    return "has no effect: training.base_batch equals the global batch (" + std::to_string(c.global_batch()) +
           "), so the rate is scaled by 1";
  return "";
}

// output.trace records the steps (rounds) of every strategy; output.trace_steps only with it.
std::string trace_settings(const std::string& key, const RunConfig& c) {
  if (key == "output.trace_steps" && !c.trace) return "has no effect without output.trace = true";
  return "";
}

// run.model_seed, run.data_seed, run.heterogeneity_seed: each matters where its stream draws something.
std::string seed_streams(const std::string& key, const RunConfig& c) {
  const bool timing_only = c.workload.active() && !c.workload.proxy;
  if ((key == "run.model_seed" || key == "run.data_seed") && timing_only)
    return "has no effect in a timing-only run of a workload: it has no weights and no data";
  if (key != "run.heterogeneity_seed") return "";
  const StragglerConfig& s = c.heterogeneity.stragglers;
  if (c.strategy == Strategy::Federated || s.chosen_at_random || s.has_random_slowdowns()) return "";
  return "has no effect: nothing is drawn from it here (it draws the workers of stragglers.slow_fraction, "
         "random slowdowns and federated rounds)";
}

const std::vector<Rule>& rules() {
  static const std::vector<Rule> all = [] {
    std::vector<Rule> r = {seed_streams, workload_settings, trace_settings, warmup_settings, lr_scaling_settings,
                           strategy_sections,
                           strategy_general_keys,
                           straggler_settings, fault_reaction_settings, compression_settings, fl_algorithm_settings,
                           fl_round_settings, network_model_settings, matmul_model_settings, kernel_issue_settings,
                           parameter_server_update_settings,
                           secure_aggregation_settings,
                           architecture_settings, qa_model_settings, dataset_settings, topology_settings,
                           hierarchical_without_nodes, intra_node_fabric_without_nodes, pcie_switch_settings,
                           network_in_one_node,
                           grouped_gpu_settings, single_worker_collectives, single_worker_zero, zero3_prefetch_settings,
                           zero_collective_settings};
    for (Rule& n : numerics_rules()) r.push_back(std::move(n));
    return r;
  }();
  return all;
}

// Every rule in order, then the collective algorithms' keys for the collectives this run calls.
std::string why_ignored_in(const std::string& key, const RunConfig& config, const std::vector<CollectiveKind>& kinds,
                           bool training) {
  for (const Rule& rule : rules())
    if (std::string reason = rule(key, config); !reason.empty()) return reason;
  if (std::string reason = tuner_settings(key, config, kinds, training); !reason.empty()) return reason;
  return collective_settings(key, config, kinds);
}

}  // namespace

std::string why_ignored(const std::string& key, const RunConfig& config) {
  return why_ignored_in(key, config, training_collective_kinds(), true);
}

std::string why_ignored_by_collective(const std::string& key, const RunConfig& config, CollectiveKind kind) {
  return why_ignored_in(key, config, {kind}, false);
}

std::string zero_sharding_without_effect(int zero_stage, int data_parallel_gpus) {
  if (zero_stage == 0 || data_parallel_gpus > 1) return "";
  return "has no effect on one GPU: ZeRO shards the model state over the data-parallel GPUs, and one holds it "
         "all, as without ZeRO";
}

std::string IgnoredKey::describe() const { return where.describe() + ": " + key + ": " + reason; }

std::vector<IgnoredKey> find_ignored_keys(const RunConfig& config, const KeyOrigins& origins) {
  std::vector<IgnoredKey> out;
  for (const KeySpec& spec : all_keys()) {
    // Only what the user wrote: defaults apply by definition, and a profile describes hardware in full.
    if (!origins.set_by_user(spec.name)) continue;
    const Origin& where = origins.of(spec.name);
    if (std::string reason = why_ignored(spec.name, config); !reason.empty())
      out.push_back({spec.name, std::move(reason), where});
  }
  return out;
}

}  // namespace dtsim::sim
