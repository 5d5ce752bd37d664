#include "sim/app/outputs.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <unistd.h>
#include <zlib.h>

#include <cerrno>

#include "gpu/numerics_environment.hpp"
#include "models/input_file.hpp"
#include "models/name_table.hpp"
#include "sim/app/compute_model_json.hpp"
#include "sim/app/cost.hpp"
#include "sim/config/strategy.hpp"
#include "sim/config/sync_config.hpp"
#include "sim/scenario/text.hpp"
#include "sim/strategies/training.hpp"
#include "sim/scenario/units.hpp"

#ifndef DTSIM_VERSION
#define DTSIM_VERSION "unknown"
#endif

namespace fs = std::filesystem;

namespace dtsim::sim {
namespace {

std::string percent(double fraction) { return printf_number("%.2f %%", 100.0 * fraction); }

std::string seconds(double s) { return format_quantity(s, Dimension::Time); }

std::vector<size_t> shard_sizes(const models::Partition& p) {
  std::vector<size_t> sizes;
  for (const auto& shard : p.shards) sizes.push_back(shard.size());
  return sizes;
}

}  // namespace

const char* dtsim_version() { return DTSIM_VERSION; }

nlohmann::json link_json(const LinkTraffic::LinkRow& link) {
  return {{"link", link.link},
          {"bandwidth_Bps", link.bandwidth_Bps},
          {"bytes", link.bytes},
          {"mean_utilisation", link.mean_utilisation},
          {"peak_utilisation", link.peak_utilisation},
          {"peak_window_s", link.window_s}};
}

// Loss scaling whose every step overflowed: the run completes its planned steps but never updates the model,
// which its outputs say. "" when some step was applied.
static std::string every_step_skipped_note(const RunConfig& c, const RunResult& r) {
  if (r.steps == 0 || r.precision.skipped_steps < r.steps) return "";
  const bool dynamic = c.precision.loss_scaling == models::LossScaleMode::Dynamic;
  return "every update overflowed and was skipped (" + std::to_string(r.precision.skipped_steps) +
         " skipped): the model never trained (" +
         (dynamic ? "the dynamic loss scale fell to " + printf_number("%g", r.precision.final_loss_scale) +
                        " without one that fits; start it lower with precision.loss_scale"
                  : std::string("lower precision.loss_scale, or use dynamic loss scaling")) +
         ")";
}

// Idle is the run's time less the other two: what rounding leaves of it (1e-19 s) is none.
static double idle_without_rounding(double idle, double simulated_time_s) {
  return std::fabs(idle) <= 1e-9 * std::max(1e-30, simulated_time_s) ? 0.0 : idle;
}

// Synchronous training's failures, one phrase each: "worker 3 at 1 ms: elastic, 7 of 8 workers went on".
static std::vector<std::string> failure_phrases(const RunResult& r) {
  std::vector<std::string> phrases;
  const nlohmann::json& d = r.strategy_details;
  if (!d.is_object() || !d.contains("faults") || !d["faults"].is_array()) return phrases;
  const int workers = static_cast<int>(r.worker_time.size());
  for (const nlohmann::json& f : d["faults"]) {
    std::vector<int> ranks;
    for (const auto& w : f.value("workers", nlohmann::json::array())) ranks.push_back(w.get<int>());
    std::sort(ranks.begin(), ranks.end());
    std::vector<std::string> who;
    for (const int w : ranks) who.push_back(std::to_string(w));
    std::string text = (ranks.size() == 1 ? "worker " : "workers ") + models::join_names(who, ", ", ", ") +
                       " at " + seconds(f.value("failed_at_s", 0.0)) + ": " + f.value("reaction", std::string("?"));
    const std::optional<FaultReaction> reaction = fault_reaction_table().parse(f.value("reaction", std::string()));
    if (reaction == FaultReaction::Restart)
      text += ", " + std::to_string(f.value("steps_rolled_back", int64_t{0})) + " steps redone";
    else if (reaction == FaultReaction::Elastic)
      text += ", " + std::to_string(f.value("workers_after", 0)) + " of " + std::to_string(workers) + " workers went on";
    if (f.contains("note")) text += " (" + f["note"].get<std::string>() + ")";
    phrases.push_back(text);
  }
  return phrases;
}

// How far below its best a completed run's last accuracy must end for the run's reason to say so: 10 points,
// far beyond the spread between seeds of a run that trains normally (under a point in docs/validation.md's
// tables). A run that swings that much from round to round gets the note too; it states the fact only.
constexpr double kFellBackNote = 0.10;

// A run that completes far below its own best (a network collapsed to chance by too large a rate, with no
// loss ever non-finite) says so, so that "completed" beside its final accuracy is not read as a result.
static std::string fell_back_note(const RunResult& r) {
  const EvalPoint* best = r.best_point();
  if (best == nullptr || best->test_accuracy - r.final_accuracy() < kFellBackNote) return "";
  return "; its test accuracy ended " + printf_number("%.1f", 100.0 * (best->test_accuracy - r.final_accuracy())) +
         " points below its best (" + percent(best->test_accuracy) + " at step " + std::to_string(best->step) + ")";
}

// Federated rounds whose selected clients were all dropped (a deadline no client can meet, stragglers under the
// drop policy, clients lost): they ran and trained nothing, which "completed" alone would not tell.
static std::string rounds_without_update_note(const RunResult& r) {
  const nlohmann::json& d = r.strategy_details;
  if (!d.contains("rounds_without_update") || !d["rounds_without_update"].is_number()) return "";
  const int64_t rounds = d["rounds_without_update"].get<int64_t>();
  if (rounds <= 0) return "";
  std::vector<std::string> why;
  if (d.contains("dropped") && d["dropped"].is_object())
    for (const auto& [key, what] : std::vector<std::pair<std::string, std::string>>{
             {"deadline", " at fl.deadline"}, {"straggler", " as stragglers"}, {"overcommit", " as over-committed"},
             {"lost", " lost"}})
      if (const nlohmann::json& n = d["dropped"].value(key, nlohmann::json(0)); n.is_number() && n.get<int64_t>() > 0)
        why.push_back(std::to_string(n.get<int64_t>()) + what);
  std::string note = "; " + std::to_string(rounds) + " of " + std::to_string(r.steps) +
                     (r.steps == 1 ? " round" : " rounds") + " aggregated no client's work (every selected client was dropped";
  if (!why.empty()) note += ": " + models::join_names(why, ", ", " and ") + " in all";
  note += ") and trained nothing";
  const int64_t empty = d.value("empty_rounds", nlohmann::json(0)).is_number() ? d["empty_rounds"].get<int64_t>() : 0;
  if (rounds + empty >= r.steps) note += "; the model never trained";
  return note;
}

// What a completed run ran through, to follow "every planned step ran": failures, federated rounds that had
// no client and trained nothing, and an accuracy that ended far below its best; empty when none.
static std::string completed_notes(const RunResult& r) {
  const nlohmann::json& d = r.strategy_details;
  if (!d.is_object()) return fell_back_note(r);
  std::string notes;
  if (const size_t failures = failure_phrases(r).size(); failures > 0) {
    notes += ", through " + std::to_string(failures) + (failures == 1 ? " failure" : " failures");
    if (d.contains("workers_at_end") && d["workers_at_end"].is_number())
      notes += " (" + std::to_string(d["workers_at_end"].get<int>()) + " of " + std::to_string(r.worker_time.size()) +
               " workers at the end)";
  }
  // The parameter server's and federated learning's failures are counted, not listed one by one.
  if (d.contains("faults") && d["faults"].is_object()) {
    const nlohmann::json& f = d["faults"];
    const auto count = [&](const char* key) { return f.contains(key) && f[key].is_number() ? f[key].get<int64_t>() : 0; };
    const auto counted = [](int64_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
    if (f.contains("gradients_lost"))
      notes += ", through worker failures (" + counted(count("gradients_lost"), "gradient") + " and " +
               counted(count("pulls_lost"), "pull") + " lost, " + counted(count("restarts"), "restart") + ")";
    else if (count("clients_lost") > 0)
      notes += ", through failures (" + counted(count("clients_lost"), "client") + " lost in a round)";
  }
  if (d.contains("empty_rounds") && d["empty_rounds"].is_number() && d["empty_rounds"].get<int64_t>() > 0) {
    const int64_t empty = d["empty_rounds"].get<int64_t>();
    notes += "; " + std::to_string(empty) + " of " + std::to_string(r.steps) + (r.steps == 1 ? " round" : " rounds") +
             " had no client online and trained nothing";
  }
  notes += rounds_without_update_note(r);
  return notes + fell_back_note(r);
}

static std::string completed_reason(const RunResult& r, const RunConfig& c) {
  return (strategy_descriptor(c.strategy).steps_are_rounds ? "every planned round ran" : "every planned step ran") +
         completed_notes(r);
}

gpu::NumericsFingerprint numerics_fingerprint_of(const RunResult& r) {
  // The CPU backend's bits depend on the build alone; a GPU's also on which device computed them.
  return gpu::numerics_fingerprint(r.backend == "cpu" ? r.backend : r.backend_description);
}

std::string describe_numerics(const gpu::NumericsFingerprint& f) {
  if (f.native())
    return "NATIVE build (-march=native): results are specific to CPUs like its build machine's; fingerprint " + f.id();
  return f.isa_level + " (portable: the same bits on every " + f.isa_level + " CPU), fingerprint " + f.id();
}

nlohmann::json numerics_json(const gpu::NumericsFingerprint& f) {
  const gpu::FloatingPointEnvironment found = gpu::floating_point_environment_at_start();
  nlohmann::json j = {{"fingerprint", f.id()},
                      {"isa_level", f.isa_level},
                      {"cpu_features", f.cpu_features},
                      {"compiler", f.compiler},
                      {"eigen", f.eigen_version},
                      {"gemm_blocking", {{"l1_bytes", f.gemm_blocking.l1_bytes},
                                         {"l2_bytes", f.gemm_blocking.l2_bytes},
                                         {"l3_bytes", f.gemm_blocking.l3_bytes}}},
                      {"elementary_functions", f.elementary_functions},
                      {"floating_point", f.floating_point},
                      {"backend", f.backend},
                      {"ran_on_cpu", gpu::running_cpu_model()}};
  if (!found.is_ieee_default())
    j["floating_point_at_start"] = gpu::describe(found) + ", set before dtsim started; dtsim reset it";
  if (f.native())
    j["note"] = "built with -march=native: results are specific to CPUs with these features, and differ from the "
                "portable build's";
  return j;
}

nlohmann::json make_summary(const RunInputs& inputs, const RunResult& r, double wall_time_s) {
  const RunConfig& c = inputs.config;
  const WorkerTime mean = r.mean_time();
  nlohmann::json s;
  s["status"] = to_string(r.status);
  s["status_reason"] = r.status == RunStatus::Completed && r.status_reason.empty() ? completed_reason(r, c)
                                                                                   : r.status_reason;
  if (r.divergence)
    s["divergence"] = {{"step", r.divergence->step}, {"simulated_time_s", r.divergence->sim_time_s},
                       {"cause", r.divergence->cause}};
  s["final_test_accuracy"] = r.final_accuracy();
  s["best_test_accuracy"] = r.best_accuracy();
  s["final_test_loss"] = r.points.empty() ? 0.0 : r.points.back().test_loss;
  s["simulated_time_s"] = r.simulated_time_s;
  s["wall_time_s"] = wall_time_s;
  const auto idle = [&](double x) { return idle_without_rounding(x, r.simulated_time_s); };
  s["time_breakdown_s"] = {{"compute", mean.compute}, {"communication", mean.communication}, {"idle", idle(mean.idle)}};
  // The same per worker (rank order): who computed, who waited.
  nlohmann::json per_worker = nlohmann::json::array();
  for (const WorkerTime& t : r.worker_time)
    per_worker.push_back({{"compute", t.compute}, {"communication", t.communication}, {"idle", idle(t.idle)}});
  s["worker_time_s"] = per_worker;
  s["bytes_sent"] = r.bytes_sent;
  if (r.busiest_link)
    s["busiest_link"] = link_json(*r.busiest_link);
  s["steps"] = r.steps;
  // Epochs of training data consumed: federated learning counts its clients' local epochs itself (its steps
  // are rounds); the others consume one global batch per step.
  const double epochs = r.strategy_details.contains("epochs") ? r.strategy_details["epochs"].get<double>()
                        : r.steps_per_epoch > 0 ? static_cast<double>(r.steps) / r.steps_per_epoch
                                                : 0.0;
  s["epochs"] = epochs;
  s["samples_per_simulated_second"] =
      r.simulated_time_s > 0 ? epochs * r.steps_per_epoch * c.global_batch() / r.simulated_time_s : 0.0;
  s["seed"] = c.seed;
  s["seeds"] = {{"model", c.model_seed()}, {"data", c.data_seed()}, {"heterogeneity", c.heterogeneity_seed()}};
  if (!c.heterogeneity.stragglers.slow_workers.empty()) {
    nlohmann::json slow = nlohmann::json::array();
    for (const SlowWorker& w : c.heterogeneity.stragglers.slow_workers)
      slow.push_back({{"worker", w.worker}, {"speed_factor", w.speed_factor}});
    s["slow_workers"] = slow;
  }
  s["dtsim_version"] = dtsim_version();
  s["backend"] = r.backend;
  s["backend_description"] = r.backend_description;
  s["numerics"] = numerics_json(numerics_fingerprint_of(r));
  s["workers"] = c.workers;
  s["platform"] = r.platform_description;
  s["global_batch"] = c.global_batch();
  s["model"] = {{"description", r.model_description},
                {"parameters", r.num_params},
                {"forward_flops_per_sample", r.forward_flops_per_sample},
                {"backward_flops_per_sample", r.backward_flops_per_sample}};
  // How the weights started (model.init); the transformer has its own initialisation.
  if (!models::architecture_descriptor(c.arch).span_transformer) s["model"]["init"] = models::to_string(c.init);
  s["dataset"] = {{"name", to_string(c.data.dataset)},
                  {"train_samples", inputs.train.num_samples},
                  {"test_samples", inputs.test.num_samples},
                  {"train_hash", inputs.train.content_hash},
                  {"test_hash", inputs.test.content_hash}};
  // NIID-Bench's feature imbalance: worker w's noise, and a test set of one noisy copy per worker.
  if (c.data.feature_noise > 0) s["dataset"]["feature_noise"] = c.data.feature_noise;
  if (inputs.partition)
    s["partition"] = {{"kind", to_string(c.data.partition)}, {"hash", inputs.partition->hash}, {"shard_sizes", shard_sizes(*inputs.partition)}};
  else
    s["partition"] = {{"kind", to_string(PartitionKind::None)}};
  s["precision"] = {{"weights", gpu::to_string(c.precision.weights)},
                    {"activations", gpu::to_string(c.precision.activations)},
                    {"gradients", gpu::to_string(c.precision.gradients)},
                    {"loss_scaling", models::to_string(c.precision.loss_scaling)},
                    {"final_loss_scale", r.precision.final_loss_scale},
                    {"overflows", r.precision.overflows},
                    {"skipped_steps", r.precision.skipped_steps},
                    {"scale_growths", r.precision.scale_growths}};
  if (const std::string note = every_step_skipped_note(c, r); !note.empty()) s["precision"]["note"] = note;
  // A proxy run charges the workload's products, in the workload's precision (compute_cost.cpp).
  s["compute_model"] = compute_model_json(c, charged_math(c));
  s["framework"] = c.framework.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.framework);
  if (!r.qa_details.empty()) s["qa"] = r.qa_details;
  s["optimizer"] = models::to_string(c.optimizer.kind);
  s["strategy"] = r.strategy_details;
  if (r.strategy_details.contains("compression")) s["compression"] = r.strategy_details["compression"];
  if (r.strategy_details.contains("mean_staleness")) s["mean_staleness"] = r.strategy_details["mean_staleness"];
  s["strategy"]["name"] = r.strategy;
  nlohmann::json ignored = nlohmann::json::array();
  for (const auto* keys : {&inputs.ignored_keys, &r.ignored_after_run})
    for (const IgnoredKey& k : *keys)
      ignored.push_back({{"key", k.key}, {"reason", k.reason}, {"where", k.where.describe()}});
  s["ignored_keys"] = ignored;
  // Proxy mode: the time and bytes above are the named workload's, the accuracy the built-in model's.
  if (inputs.proxy)
    s["proxy"] = {{"workload", inputs.proxy->name}, {"parameters", inputs.proxy->parameters()},
                  {"trainable", inputs.proxy->trainable()}, {"micro_batch", c.workload.micro_batch}};
  const CostReport cost = price_run(c, r.worker_time, r.simulated_time_s);
  s["cost"] = cost.to_json();
  if (const EvalPoint* hit = first_reaching(r.points, c.target_accuracy)) {
    const CostReport to_target = price_run(c, r.worker_time, hit->sim_time_s);
    s["target"] = {{"accuracy", c.target_accuracy}, {"reached", true}, {"step", hit->step},
                   {"simulated_time_s", hit->sim_time_s}, {"cost_mid", to_target.priced ? nlohmann::json(to_target.mid) : nlohmann::json(nullptr)}};
  } else if (c.target_accuracy > 0) {
    s["target"] = {{"accuracy", c.target_accuracy}, {"reached", false}};
  }
  s["scenario_file"] = c.scenario_path;
  s["scenario"] = c.scenario_json;
  s["sets"] = c.command_line_sets;
  return s;
}

void write_file_atomically(const std::string& dir, const std::string& name, const std::string& content) {
  const fs::path target = fs::path(dir) / name;
  const fs::path temp = fs::path(dir) / ("." + name + ".tmp");
  {
    std::ofstream f(temp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + temp.string());
    f << content;
    if (!f) throw std::runtime_error("failed writing " + temp.string());
  }
  std::error_code ec;
  fs::rename(temp, target, ec);
  if (ec) {  // e.g. the target is a folder: leave nothing behind
    fs::remove(temp);
    throw std::runtime_error("cannot write " + target.string() + ": " + ec.message());
  }
}

void write_model(const std::string& dir, const std::vector<float>& params) {
  // x86-64 and aarch64 are little-endian, so the in-memory bytes are the file format.
  std::string bytes(reinterpret_cast<const char*>(params.data()), params.size() * sizeof(float));
  write_file_atomically(dir, "model.bin", bytes);
}

std::string describe_setup(const RunInputs& in) {
  const RunConfig& c = in.config;
  std::ostringstream o;
  const auto gpu_text = [&](const GpuSpec& gpu) {
    return gpu.name + " (" + to_string(c.math) + " " + format_quantity(gpu.peak(c.math), Dimension::FlopRate) + " × " +
           printf_number("%g", gpu.efficiency) + ")";
  };
  o << c.name << ": ";
  if (c.layout.groups.empty()) {
    o << c.workers << " × " << gpu_text(c.gpu);
  } else {  // every node's GPU comes from its group ([gpu] is on no node)
    for (size_t i = 0; i < c.layout.groups.size(); ++i) {
      const NodeGroup& g = c.layout.groups[i];
      o << (i ? " + " : "") << g.name << ": " << g.nodes * c.layout.gpus_per_node_of(g) << " × " << gpu_text(g.gpu);
    }
  }
  o << " on "
    << c.fabric.name << " (" << printf_number("%.4g Gb/s", c.fabric.bandwidth * 8 / 1e9)
    << ", " << to_string(c.layout.topology) << "), ";
  o << describe_strategy(c);
  // Local SGD with H > 1 and no synchronous start averages models only: its compression never runs (the keys
  // are reported as without effect), so the header does not claim it.
  if (c.compression.active() && !averages_models_only(c)) {
    const models::CompressionSettings& k = c.compression.settings;
    o << ", " << models::to_string(k.kind) << " compression";
    if (k.kind == models::CompressorKind::TopK || k.kind == models::CompressorKind::RandomK)
      o << " " << printf_number("%.3g %%", 100.0 * k.ratio);
    if (k.kind == models::CompressorKind::PowerSgd) o << " rank " << k.powersgd_rank;
    if (k.kind == models::CompressorKind::Qsgd) o << " " << k.qsgd_levels << " levels";
    o << (k.error_feedback ? " with error feedback" : "");
  }
  if (in.proxy)
    o << "; compute and gradient traffic charged as " << in.proxy->name << " (proxy, micro-batch "
      << c.workload.micro_batch << ")";
  return o.str();
}

std::string progress_line(const EvalPoint& p, const char* step_word) {
  // A value that is not finite shows as "nan" or "inf" here (it is what a person watching needs to see); the
  // metrics.csv row leaves it empty and names it in its nonfinite column.
  const std::string train_loss = p.train_loss_measured ? printf_number("%.4f", p.train_loss) : std::string("-");
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-6s %7" PRId64 "  epoch %6.2f  sim %10s  train loss %8s  test loss %.4f  test acc %6.2f %%",
                step_word, p.step, p.epoch, seconds(p.sim_time_s).c_str(), train_loss.c_str(), p.test_loss,
                100.0 * p.test_accuracy);
  return buf;
}

std::string human_summary(const RunInputs& in, const RunResult& r, double wall_time_s, const std::string& out_dir) {
  WorkerTime t = r.mean_time();
  t.idle = idle_without_rounding(t.idle, r.simulated_time_s);
  const double busy = t.compute + t.communication + t.idle;
  const auto share = [busy](double x) { return busy > 0 ? printf_number(" (%.1f %%)", 100.0 * x / busy) : std::string(); };
  std::ostringstream o;
  o << "Summary of " << in.config.name << " (" << r.model_description << ", " << r.num_params << " parameters)\n";
  if (r.status != RunStatus::Completed)
    o << "  status                " << to_string(r.status) << ": " << r.status_reason << "\n";
  if (const std::string note = every_step_skipped_note(in.config, r); !note.empty())
    o << "  note                  " << note << "\n";
  // A completed run says what it ran through, where it ran through something (failures, empty rounds, an
  // accuracy far below its best).
  if (r.status == RunStatus::Completed && !completed_notes(r).empty())
    o << "  status                completed: " << completed_reason(r, in.config) << "\n";
  o << "  platform              " << r.platform_description << "\n";
  o << "  backend               " << r.backend_description << "\n";
  o << "  numerics              " << describe_numerics(numerics_fingerprint_of(r)) << "\n";
  // A run that ended early has no final evaluation: its last row may be far behind where it stopped.
  if (r.status == RunStatus::Completed || r.points.empty())
    o << "  final test accuracy   " << percent(r.final_accuracy()) << "   (best " << percent(r.best_accuracy()) << ")\n";
  else
    o << "  last test accuracy    " << percent(r.final_accuracy()) << " at " << strategy_descriptor(in.config.strategy).row_step
      << " " << r.points.back().step << ", its last evaluation   (best " << percent(r.best_accuracy()) << ")\n";
  if (r.qa_details.contains("test")) {
    // The QA task's accuracy is its exact match; F1 credits partly right spans.
    const auto part = [&](const char* name) {
      const nlohmann::json& p = r.qa_details[name];
      return percent(p["exact_match"].get<double>()) + " exact, F1 " + percent(p["f1"].get<double>());
    };
    o << "  QA test questions     " << part("test") << " (medical " << part("medical") << "; finance "
      << part("finance") << ")\n";
  }
  // Federated learning's steps are rounds (its rows say so too).
  const char* row_step = strategy_descriptor(in.config.strategy).row_step;
  const std::string unit = std::string(row_step) == "round" ? "round" : "step";
  o << "  simulated time        " << seconds(r.simulated_time_s) << " for " << r.steps << " " << unit
    << (r.steps == 1 ? "" : "s");
  // The rows of an asynchronous parameter server count its updates; say how the two counts relate.
  // The server's own count where the strategy gives it: the rows stop at the last evaluation, which for a
  // run that diverged or failed is earlier than the updates it applied.
  if (std::string(row_step) == "update" && !r.points.empty()) {
    const nlohmann::json& details = r.strategy_details;
    const int64_t updates = details.is_object() && details.contains("updates") && details["updates"].is_number()
                                ? details["updates"].get<int64_t>()
                                : r.points.back().step;
    o << " (global batches of gradients; the progress lines and metrics.csv count the server's " << updates
      << " update" << (updates == 1 ? "" : "s") << ")";
  }
  o << "\n";
  o << "    compute             " << seconds(t.compute) << share(t.compute) << "\n";
  o << "    communication       " << seconds(t.communication) << share(t.communication) << "\n";
  o << "    idle                " << seconds(t.idle) << share(t.idle) << "\n";
  const std::vector<std::string> failures = failure_phrases(r);
  for (size_t i = 0; i < failures.size() && i < 5; ++i)
    o << (i == 0 ? "  failures              " : "                        ") << failures[i] << "\n";
  if (failures.size() > 5) o << "                        … and " << failures.size() - 5 << " more (summary.json)\n";
  const CostReport cost = price_run(in.config, r.worker_time, r.simulated_time_s);
  o << "  GPU time              " << printf_number("%.4g GPU-hours", cost.gpu_hours);
  if (cost.priced)
    o << ", " << printf_number("%.4g", cost.mid) << " " << cost.currency << " (" << printf_number("%.4g", cost.low) << "–"
      << printf_number("%.4g", cost.high) << ")";
  else if (!cost.unpriced_reason.empty())
    o << ", no bill (" << cost.unpriced_reason << ")";
  if (cost.network_priced) o << " with the network's " << printf_number("%.4g", cost.network_mid);
  if (cost.energy_known) o << ", " << printf_number("%.4g Wh", cost.energy_joules / 3600.0);
  o << "\n";
  if (const EvalPoint* hit = first_reaching(r.points, in.config.target_accuracy))
    o << "  target " << percent(in.config.target_accuracy) << "      reached at " << seconds(hit->sim_time_s)
      << " (step " << hit->step << ")\n";
  else if (in.config.target_accuracy > 0)
    o << "  target " << percent(in.config.target_accuracy) << "      not reached\n";
  o << "  bytes sent            " << format_quantity(static_cast<double>(r.bytes_sent), Dimension::Bytes) << "\n";
  if (r.busiest_link)
    o << "  busiest link          " << r.busiest_link->link << ": " << percent(r.busiest_link->mean_utilisation)
      << " busy on average, " << percent(r.busiest_link->peak_utilisation) << " in its busiest "
      << seconds(r.busiest_link->window_s) << " (links.csv)\n";
  o << "  wall time             " << printf_number("%.1f s", wall_time_s) << "\n";
  const bool finished = r.status == RunStatus::Completed || r.status == RunStatus::Diverged;
  if (!out_dir.empty()) {
    std::string files = finished ? "metrics.csv,summary.json" : "metrics.partial.csv,summary.json";
    if (!r.links_csv.empty()) files += ",links.csv";
    if (!r.trace_json.empty()) files += ",trace.json";
    if (r.status == RunStatus::Completed && in.config.save_model) files += ",model.bin";
    o << "  outputs               " << out_dir << "/{" << files << "}\n";
  }
  return o.str();
}

std::string file_crc32(const std::string& path) {
  // Opened as every input file is: a FIFO in the scenario's place would block a plain read for ever.
  models::InputFileProblem problem;
  const int fd = models::open_input_file(path, problem);
  if (fd < 0) return "unreadable";
  uLong crc = crc32(0L, Z_NULL, 0);
  std::vector<char> buffer(1 << 20);
  for (ssize_t n; (n = ::read(fd, buffer.data(), buffer.size())) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return "unreadable";
    }
    crc = crc32_z(crc, reinterpret_cast<const Bytef*>(buffer.data()), static_cast<z_size_t>(n));
  }
  ::close(fd);
  char hex[16];
  std::snprintf(hex, sizeof hex, "%08lx", static_cast<unsigned long>(crc));
  return std::string("crc32:") + hex;
}

std::optional<nlohmann::json> read_json_file(const std::string& path) {
  models::InputFileProblem problem;
  const std::optional<std::string> text = models::read_input_file(path, models::kMaxTextInputBytes, problem);
  if (!text) return std::nullopt;
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
  if (doc.is_discarded()) return std::nullopt;
  return doc;
}


}  // namespace dtsim::sim
