#include "sim/app/run.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <stdexcept>

#include "gpu/backend.hpp"
#include "gpu/cuda_device.hpp"
#include "models/network.hpp"
#include "models/qa/qa_objective.hpp"
#include "sim/config/qa_setup.hpp"
#include "sim/config/strategy.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/world/build_platform.hpp"
#include "sim/world/heterogeneity.hpp"
#include "sim/world/link_traffic.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/strategies/training.hpp"

namespace dtsim::sim {

WorkerTime RunResult::mean_time() const {
  WorkerTime m;
  for (const WorkerTime& t : worker_time) {
    m.compute += t.compute;
    m.communication += t.communication;
    m.idle += t.idle;
  }
  const double n = worker_time.empty() ? 1.0 : static_cast<double>(worker_time.size());
  m.compute /= n;
  m.communication /= n;
  m.idle /= n;
  return m;
}

const EvalPoint* RunResult::best_point() const {
  const EvalPoint* best = nullptr;
  for (const EvalPoint& p : points)
    if (!std::isnan(p.test_accuracy) && (best == nullptr || p.test_accuracy > best->test_accuracy)) best = &p;
  return best;
}

double RunResult::best_accuracy() const {
  const EvalPoint* best = best_point();
  return best == nullptr ? 0.0 : std::max(0.0, best->test_accuracy);
}

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

// SimGrid's signals are process-wide: connect the callbacks once; they act on the run in progress.
bool g_deadlocked = false;

void connect_engine_callbacks() {
  static bool connected = false;
  if (connected) return;
  connected = true;
  // Polled as simulated time advances: a stop request ends every actor (from maestro, so none is spared).
  sg4::Engine::on_time_advance_cb([](double) {
    if (g_stop_signal != 0 && sg4::Engine::get_instance()->get_actor_count() > 0) sg4::Actor::kill_all();
  });
  sg4::Engine::on_deadlock_cb([] { g_deadlocked = true; });
}

// trace.json's link counters: the utilisation of the links that carried the most bytes, per links.csv window.
void add_link_counters(TraceLog& trace, const LinkTraffic& traffic) {
  constexpr size_t kLinksTraced = 8;
  for (const LinkTraffic::Series& s : traffic.busiest_series(kLinksTraced)) {
    const std::string name = "link " + s.link + " utilisation";
    for (size_t k = 0; k < s.utilisation.size(); ++k)
      trace.counter_until_last_span(name, static_cast<double>(k) * traffic.window_s(), s.utilisation[k]);
    // The window after the last busy one: the line drops to zero rather than holding its last value.
    trace.counter_until_last_span(name, static_cast<double>(s.utilisation.size()) * traffic.window_s(), 0.0);
  }
}

std::string format_seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g s", s);
  return text;
}

}  // namespace

RunResult result_so_far(const RunInputs& inputs, const MetricsLog& metrics, RunStatus status, std::string reason,
                        double simulated_time_s) {
  RunResult r;
  r.status = status;
  r.status_reason = std::move(reason);
  r.divergence = metrics.divergence();
  r.strategy = to_string(inputs.config.strategy);
  r.steps_per_epoch = static_cast<int>(inputs.length.steps_per_epoch);
  r.points = metrics.points();
  r.simulated_time_s = simulated_time_s;
  if (!r.points.empty()) {
    r.steps = r.points.back().step;
    r.bytes_sent = r.points.back().bytes_sent;
  }
  return r;
}

// A run that ended early (diverged, interrupted): its steps, bytes and time breakdown as the strategy counted
// them when it stopped, rather than as of the last evaluation row. When the strategy cannot say (it had
// failed), the rows' figures stay.
static void take_progress(const TrainingStrategy& strategy, RunResult& r) {
  try {
    StrategyOutcome outcome = strategy.outcome();
    r.steps = outcome.steps;
    r.bytes_sent = outcome.bytes_sent;
    r.worker_time = std::move(outcome.worker_time);
    r.precision = outcome.precision;
    // Its own counts so far (federated learning's rounds and local epochs, among others), so that a run
    // that stopped early reports the epochs it trained, not steps divided by a data-parallel epoch.
    r.strategy_details = std::move(outcome.details);
  } catch (const std::exception&) {
  }
}

// What ran, for every result however the run ended: a diverged or interrupted summary names its backend,
// platform and model like a completed one.
static void identify(RunResult& r, const gpu::Ops<float>& ops, const Platform& platform,
                     const models::Objective<float>& objective) {
  r.backend = ops.name();
  r.backend_description = ops.name();
  r.platform_description = platform.description;
  r.model_description = objective.description();
  r.num_params = objective.num_params();
}

void request_stop(int signal) { g_stop_signal = signal; }
int stop_signal() { return g_stop_signal; }

namespace {

bool g_stop_on_signals = false;
// Set once a training simulation's events run; before, dtsim is still loading data or building the platform
// (which SimGrid may take minutes over for a large fat-tree), where nothing would poll a stop request. A
// timing-only workload run never sets it: it keeps nothing until its simulation ends.
volatile std::sig_atomic_t g_simulating = 0;
// What an early stop removes: the staged metrics file, its folder, and the --out folder this run made (set
// before the data is loaded; only read from the handler).
std::vector<std::string> g_early_paths;

// SIGINT and SIGTERM ask the simulation to stop. A second signal is not caught: it ends the process at once.
// Before the simulation runs, the first one ends the process at once, with nothing written (only
// async-signal-safe calls here: write, unlink, rmdir, _exit).
void stop_on_signal(int signal) {
  if (g_simulating == 0) {
    static const char message[] = "dtsim: interrupted before the run had a result to keep; no output written\n";
    [[maybe_unused]] const ssize_t written = ::write(2, message, sizeof message - 1);
    for (const std::string& path : g_early_paths)
      if (::unlink(path.c_str()) != 0) ::rmdir(path.c_str());
    ::_exit(128 + signal);
  }
  request_stop(signal);
  std::signal(signal, SIG_DFL);
}

}  // namespace

void reclaim_stop_signals() {
  if (!g_stop_on_signals) return;
  for (const int signal : {SIGINT, SIGTERM})
    if (g_stop_signal != signal) std::signal(signal, stop_on_signal);
}

void stop_on_signals() {
  g_stop_on_signals = true;
  reclaim_stop_signals();
}

void remove_on_early_stop(std::vector<std::string> paths) { g_early_paths = std::move(paths); }

RunResult run_training(const RunInputs& inputs, MetricsLog& metrics) {
  gpu::BackendChoice backend = gpu::make_backend(inputs.config.device);
  return run_training(inputs, metrics, backend);
}

namespace {

nlohmann::json qa_part_json(const models::QaScores::Part& p) {
  return {{"examples", p.examples}, {"exact_match", p.exact_match}, {"f1", p.f1}};
}

// The span transformer on the QA task: the test set's exact match is the run's accuracy; F1 and the per-domain
// scores of the final model go to summary.json.
RunResult run_qa_training(const RunInputs& inputs, MetricsLog& metrics, gpu::BackendChoice& backend) {
  gpu::Ops<float>& ops = *backend.ops;
  const RunConfig& c = inputs.config;
  models::QaObjective objective(ops, qa_model_setup(c, *inputs.qa), inputs.qa->train, inputs.qa->test, c.workers,
                                c.batch_per_worker, inputs.partition, c.data_seed());
  RunResult r = run_training_with(inputs, metrics, ops, objective);
  r.backend_description = backend.description;
  r.forward_flops_per_sample = objective.model().forward_flops();
  r.backward_flops_per_sample = objective.model().backward_flops();
  nlohmann::json& q = r.qa_details;
  q["trained_parameters"] = objective.num_params();
  q["base_parameters"] = objective.model().base_param_count();
  q["lora_rank"] = c.qa_model.lora.rank;
  q["base_format"] = models::to_string(objective.base_format());
  q["base_bytes"] = objective.base_bytes();
  q["base_bytes_fp32"] = objective.base_bytes_fp32();
  if (r.final_params.size() == objective.num_params()) {
    const models::QaScores s = objective.scores(r.final_params.data(), inputs.qa->test);
    q["test"] = qa_part_json(s.all);
    q["medical"] = qa_part_json(s.by_domain[static_cast<int>(models::QaDomain::Medical)]);
    q["finance"] = qa_part_json(s.by_domain[static_cast<int>(models::QaDomain::Finance)]);
  }
  return r;
}

}  // namespace

RunResult run_training(const RunInputs& inputs, MetricsLog& metrics, gpu::BackendChoice& backend) {
  if (inputs.qa) return run_qa_training(inputs, metrics, backend);
  gpu::Ops<float>& ops = *backend.ops;
  auto network = models::make_network<float>(network_spec(inputs.config, inputs.train));
  const models::Network<float>* net = network.get();
  models::NetworkObjective objective(std::move(network), ops, inputs.train, inputs.test, inputs.config.workers,
                                     inputs.config.batch_per_worker, inputs.partition, inputs.config.data_seed(),
                                     inputs.config.cap_batch_at_shard);
  objective.set_feature_noise(feature_noise(inputs.config));
  RunResult r = run_training_with(inputs, metrics, ops, objective);
  r.backend_description = backend.description;
  r.forward_flops_per_sample = net->forward_flops_per_sample();
  r.backward_flops_per_sample = net->backward_flops_per_sample();
  return r;
}

RunResult run_training_with(const RunInputs& inputs, MetricsLog& metrics, gpu::Ops<float>& ops,
                            models::Objective<float>& objective) {
  const RunConfig& cfg = inputs.config;
  const PlatformSpec spec = platform_spec(cfg);
  auto engine = create_engine(network_settings(spec));
  reclaim_stop_signals();
  // Parameter-server shards and federated learning's aggregator run on hosts of their own.
  const Platform platform = build_platform(*engine, spec, server_hosts(cfg));
  HeterogeneityRuntime heterogeneity = apply_heterogeneity(*engine, platform, cfg);

  const ComputeCost compute(cfg, objective, inputs.proxy ? &*inputs.proxy : nullptr);
  std::unique_ptr<TraceLog> trace = cfg.trace ? std::make_unique<TraceLog>(cfg.trace_steps) : nullptr;
  const TrainingContext ctx{inputs,       platform, objective, ops, metrics, heterogeneity, resolved_compression(inputs),
                            compute,      trace.get()};
  // links.csv's ledger: collectives and strategies record the transfers they deliver into the active one.
  std::unique_ptr<LinkTraffic> traffic = cfg.links ? std::make_unique<LinkTraffic>() : nullptr;
  const LinkTraffic::Scope traffic_scope(traffic.get());
  // What the run's timeline and ledger hold so far, for whichever result is returned. The timeline gains the
  // busiest links' utilisation as counter tracks.
  const auto trace_text = [&trace, &traffic] {
    if (!trace) return std::string();
    if (traffic) add_link_counters(*trace, *traffic);
    return trace->json();
  };
  const auto links_text = [&traffic] { return traffic ? traffic->csv(sg4::Engine::get_clock()) : std::string(); };
  // A run whose workers have all failed cannot finish its training: it failed, whether SimGrid found its
  // actors deadlocked (they failed together) or they ended one by one.
  const auto every_worker_down = [&](double when) {
    for (int w = 0; w < cfg.workers; ++w)
      if (heterogeneity.faults().reachable(w, when)) return false;
    return true;
  };
  const auto every_worker_failed = [&](double when) {
    return result_so_far(inputs, metrics, RunStatus::Failed, every_worker_failed_reason(when), when);
  };
  std::unique_ptr<TrainingStrategy> strategy = make_strategy(ctx);
  connect_engine_callbacks();
  g_deadlocked = false;
  // The divergence rule watches every training loss and evaluation; by default the first divergence ends
  // the run there: every other actor is ended, then the one that found it.
  metrics.watch_divergence(DivergenceRule(cfg.divergence_factor), [stop = cfg.stop_on_divergence](const Divergence&) {
    if (!stop) return;
    sg4::Actor::kill_all();
    sg4::this_actor::exit();
  });
  strategy->spawn();
  std::string abnormal_end;  // why the simulation ended without finishing its work, if it did
  try {
    g_simulating = 1;  // from here a stop request is polled as simulated time advances
    engine->run();
    if (g_deadlocked || engine->get_actor_count() > 0)
      abnormal_end = "the simulation deadlocked at simulated time " + format_seconds(sg4::Engine::get_clock()) +
                     ": actors were still waiting with nothing left to wake them";
  } catch (const InputError&) {
    // A problem with the input found during the run stays an input error (exit 2); the strategy is kept
    // alive for the reason given below.
    (void)strategy.release();
    throw;
  } catch (const std::exception& e) {
    abnormal_end = e.what();
  }
  if (!abnormal_end.empty()) {
    // Actors may still be blocked on the semaphores and mailboxes the strategy's objects hold, and SimGrid
    // aborts when such an object is destroyed: on this path the strategy is deliberately not destroyed (the
    // process reports the end and exits).
    const double now = sg4::Engine::get_clock();
    TrainingStrategy* kept = strategy.release();
    if (every_worker_down(now)) {
      RunResult failed = every_worker_failed(now);
      take_progress(*kept, failed);
      identify(failed, ops, platform, objective);
      failed.trace_json = trace_text();
      failed.links_csv = links_text();
      (void)trace.release();  // the strategy, kept alive above, may still point at it
      return failed;
    }
    throw std::runtime_error(abnormal_end + " (a dtsim bug; please report it with the scenario)");
  }
  // A run that ended before its planned end (stopped, diverged, failed): the rows so far, and the strategy's
  // own count of how far training got (steps, bytes, time), with what ran and its trace and links.
  const auto ended_early = [&](RunResult r) {
    take_progress(*strategy, r);
    identify(r, ops, platform, objective);
    r.trace_json = trace_text();
    r.links_csv = links_text();
    if (traffic) r.busiest_link = traffic->busiest(r.simulated_time_s);
    return r;
  };
  if (g_stop_signal != 0)
    return ended_early(result_so_far(inputs, metrics, RunStatus::Interrupted,
                                     "stopped by signal " + std::to_string(g_stop_signal) + " at simulated time " +
                                         format_seconds(sg4::Engine::get_clock()),
                                     sg4::Engine::get_clock()));
  // "<cause> at round 7 (simulated time 2.39 s)": in the unit of the rows (a step, a parameter-server update or
  // a round).
  const auto divergence_reason = [&](const Divergence& d) {
    return d.cause + " at " + strategy_descriptor(inputs.config.strategy).row_step + " " + std::to_string(d.step) +
           " (simulated time " + format_seconds(d.sim_time_s) + ")";
  };
  if (metrics.divergence() && cfg.stop_on_divergence) {
    const Divergence& d = *metrics.divergence();
    // The rows stop at the last evaluation; the strategy knows how far training got (steps, bytes, time).
    return ended_early(result_so_far(inputs, metrics, RunStatus::Diverged,
                                     divergence_reason(d) + "; the run stopped there", sg4::Engine::get_clock()));
  }
  if (every_worker_down(sg4::Engine::get_clock())) return ended_early(every_worker_failed(sg4::Engine::get_clock()));
  StrategyOutcome outcome = strategy->outcome();
  if (!outcome.unfinished.empty())
    return ended_early(
        result_so_far(inputs, metrics, RunStatus::Failed, outcome.unfinished, sg4::Engine::get_clock()));

  RunResult r;
  identify(r, ops, platform, objective);
  r.strategy = to_string(inputs.config.strategy);
  r.steps_per_epoch = static_cast<int>(inputs.length.steps_per_epoch);
  r.points = metrics.points();
  r.worker_time = std::move(outcome.worker_time);
  r.simulated_time_s = sg4::Engine::get_clock();
  r.bytes_sent = outcome.bytes_sent;
  r.steps = outcome.steps;
  r.precision = outcome.precision;
  r.strategy_details = std::move(outcome.details);
  r.final_params = std::move(outcome.final_params);
  r.trace_json = trace_text();
  r.links_csv = links_text();
  if (traffic) r.busiest_link = traffic->busiest(r.simulated_time_s);
  if (const auto& d = metrics.divergence()) {  // eval.stop_on_divergence = false: it ran on regardless
    r.status = RunStatus::Diverged;
    r.divergence = d;
    r.status_reason = divergence_reason(*d) + "; the run continued (eval.stop_on_divergence = false)";
  }
  // A failure planned after the last step never happened: said, as a key without effect is, once the run's
  // end is known.
  for (const FaultEvent& e : inputs.config.heterogeneity.faults.events)
    if (e.down_at > r.simulated_time_s)
      r.ignored_after_run.push_back(
          {"faults.events",
           std::string("has no effect: '") + to_string(e.target) + " " + std::to_string(e.index) + " down at " +
               format_seconds(e.down_at) + "' comes after the run ended at " + format_seconds(r.simulated_time_s),
           inputs.origins.of("faults.events")});
  // So is background traffic planned after it: a flow that would start, or a link profile's point that would
  // apply, once the run had ended.
  const BackgroundConfig& background = inputs.config.heterogeneity.background;
  for (const BackgroundFlow& f : background.flows)
    if (f.start > r.simulated_time_s)
      r.ignored_after_run.push_back({"background.flows",
                                     "has no effect: the flow from worker " + std::to_string(f.from) + " to worker " +
                                         std::to_string(f.to) + " starts at " + format_seconds(f.start) +
                                         ", after the run ended at " + format_seconds(r.simulated_time_s),
                                     inputs.origins.of("background.flows")});
  for (const LinkProfile& profile : background.link_profiles)
    for (const BandwidthPoint& p : profile.points)
      if (p.time > r.simulated_time_s)
        r.ignored_after_run.push_back({"background.link_profile",
                                       "has no effect: its point at " + format_seconds(p.time) +
                                           " comes after the run ended at " + format_seconds(r.simulated_time_s),
                                       inputs.origins.of("background.link_profile")});
  return r;
}

}  // namespace dtsim::sim
