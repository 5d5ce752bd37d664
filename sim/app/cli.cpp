#include "sim/app/cli.hpp"

#include <boost/program_options.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "models/name_table.hpp"
#include "sim/app/flags.hpp"
#include "sim/app/collective_command.hpp"
#include "sim/app/keys_command.hpp"
#include "sim/app/live_progress.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/app/outputs.hpp"
#include "sim/app/profiles_command.hpp"
#include "sim/app/sweep_command.hpp"
#include "sim/app/validate_command.hpp"
#include "sim/app/workload_command.hpp"
#include "sim/app/run.hpp"
#include "sim/app/workload_run.hpp"
#include "sim/app/run_folder.hpp"
#include "sim/scenario/keys.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/text.hpp"
#include "sim/scenario/units.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace dtsim::sim {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

const char* const kUsage =
    "usage: dtsim run SCENARIO.ini [--out DIR] [--set section.key=value]... [--strict] [--quiet]\n"
    "       dtsim check SCENARIO.ini [--set section.key=value]... [--strict]\n"
    "       dtsim sweep SCENARIO.ini --vary section.key=v1,v2,... [--seeds N] [--jobs N] [--out DIR] [--set ...]\n"
    "       dtsim collect DIR\n"
    "       dtsim compare DIR [--columns name,...]\n"
    "       dtsim validate [--quick] [--seeds N] [--only NAME,...]\n"
    "       dtsim keys [--format text|markdown]\n"
    "       dtsim profiles [DIR]\n"
    "       dtsim collective [--profile P] [--topology T] [--ranks N] [--algorithm A] [--sizes MIN:MAX] [--op OP]\n"
    "                        [--fidelity F] [--gpus-per-node G] [--warmup W] [--iters N] [--set section.key=value]...\n"
    "       dtsim workload [NAME] [--gpus N] [--zero S] [--micro-batch B] [--checkpointing] [--gpu P] [--layers]\n"
    "       dtsim --version | --help\n"
    "\n"
    "  run     simulate the scenario and write metrics.csv and summary.json to DIR (default out/<run.name>)\n"
    "  check   validate the scenario, its profiles and its dataset without running it\n"
    "  sweep   run the scenario over every combination of the --vary values and seeds (see dtsim sweep --help)\n"
    "  collect rebuild a sweep's results.csv and summary.csv from its run folders\n"
    "  compare print a sweep's groups side by side (mean ± std over seeds)\n"
    "  validate  check the article's claims over seeds and print PASS or FAIL per claim (see dtsim validate --help)\n"
    "  keys    list every scenario key with its type, unit, default and meaning\n"
    "  profiles  list the GPU and fabric profiles in DIR (default: the profile folder) with their main numbers\n"
    "  collective  time one collective at doubling sizes, printed like nccl-tests (see dtsim collective --help)\n"
    "  workload  the workload catalog, or one workload's FLOPs and memory per GPU (see dtsim workload --help)\n"
    "\n"
    "options:\n"
    "  --out DIR               output folder of 'run'\n"
    "  --set section.key=value override a scenario key (repeatable)\n"
    "  --strict                a key that has no effect in this run is an error, not a warning\n"
    "  --quiet                 print nothing but errors and warnings\n"
    "  --format F              output of 'keys': text (default) or markdown (the page docs/keys.md)\n"
    "\n"
    "exit status: 0 success (a run that diverged too), 2 bad input, 1 a run whose job failed or an internal\n"
    "error, 130 / 143 stopped by SIGINT / SIGTERM\n";

struct CommandLine {
  std::string command;
  std::string scenario;
  std::string out;
  std::vector<std::string> sets;
  std::string format = "text";  // of 'keys'
  bool quiet = false;
  bool strict = false;
  bool help = false;
  bool version = false;
  std::vector<std::string> given;  // the named flags on the command line, for the command to check
};

CommandLine parse_command_line(int argc, char** argv) {
  po::options_description named;
  named.add_options()("out", po::value<std::string>())("set", po::value<std::vector<std::string>>()->composing())(
      "quiet", po::bool_switch())("strict", po::bool_switch())("help,h", po::bool_switch())(
      "version", po::bool_switch())("format", po::value<std::string>());
  po::options_description hidden;
  hidden.add_options()("command", po::value<std::string>())("scenario", po::value<std::string>())(
      "extra", po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(named).add(hidden);
  po::positional_options_description positional;
  positional.add("command", 1).add("scenario", 1).add("extra", -1);

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError("command line", "", e.what(), "run 'dtsim --help'");
  }
  refuse_flags_as_values(vm, vm.count("command") ? vm["command"].as<std::string>() : std::string());
  CommandLine cl;
  if (vm.count("command")) cl.command = vm["command"].as<std::string>();
  if (vm.count("scenario")) cl.scenario = vm["scenario"].as<std::string>();
  if (vm.count("out")) cl.out = vm["out"].as<std::string>();
  if (vm.count("set")) cl.sets = vm["set"].as<std::vector<std::string>>();
  if (vm.count("format")) cl.format = vm["format"].as<std::string>();
  cl.quiet = vm["quiet"].as<bool>();
  cl.strict = vm["strict"].as<bool>();
  cl.help = vm["help"].as<bool>();
  cl.version = vm["version"].as<bool>();
  for (const char* flag : {"out", "set", "format"})
    if (vm.count(flag)) cl.given.emplace_back(flag);
  for (const char* flag : {"quiet", "strict"})
    if (vm[flag].as<bool>()) cl.given.emplace_back(flag);
  if (vm.count("out") && cl.out.empty())
    throw InputError("command line", "--out", "is empty", "name the run's folder, or leave --out out for out/<run.name>");
  if (vm.count("scenario") && cl.scenario.empty())
    throw InputError("command line", "", "an empty " + std::string(cl.command == "profiles" ? "folder" : "scenario") + " name",
                     "run 'dtsim --help'");
  if (vm.count("extra"))
    throw InputError("command line", "", "unexpected argument '" + vm["extra"].as<std::vector<std::string>>().front() + "'",
                     "run 'dtsim --help'");
  return cl;
}

// A flag the command does not read would be ignored without a word: refused, naming it. (The other commands
// parse their own flags.)
void refuse_flags_not_read(const CommandLine& cl) {
  static const std::map<std::string, std::set<std::string>> reads = {
      {"run", {"out", "set", "strict", "quiet"}}, {"check", {"set", "strict", "quiet"}}, {"keys", {"format"}}, {"profiles", {}}};
  const auto it = reads.find(cl.command);
  if (it == reads.end()) return;
  std::vector<std::string> takes;
  for (const std::string& flag : it->second) takes.push_back("--" + flag);
  for (const std::string& flag : cl.given)
    if (it->second.count(flag) == 0)
      throw InputError("command line", "--" + flag, "does not apply to 'dtsim " + cl.command + "'",
                       takes.empty() ? "drop it" : "it takes " + models::join_names(takes, ", ", " and "));
  if (cl.command == "keys" && !cl.scenario.empty())
    throw InputError("command line", "", "unexpected argument '" + cl.scenario + "'", "'dtsim keys' takes no file");
}

void require_scenario(const CommandLine& cl) {
  if (cl.scenario.empty())
    throw InputError("command line", "", "'dtsim " + cl.command + "' needs a scenario file",
                     "e.g. dtsim " + cl.command + " scenarios/quickstart.ini");
}

// Keys the user set that this run does not read: one warning line each on stderr (even with --quiet, like
// errors), or with --strict an error at the first of them.
void report_ignored_keys(const CommandLine& cl, const std::vector<IgnoredKey>& ignored) {
  if (ignored.empty()) return;
  if (cl.strict) {
    const IgnoredKey& first = ignored.front();
    const std::string more =
        ignored.size() > 1 ? " (and " + std::to_string(ignored.size() - 1) + " more such keys)" : std::string();
    throw InputError(first.where, first.key, first.reason + more, "remove it, or run without --strict");
  }
  for (const IgnoredKey& k : ignored) std::fprintf(stderr, "dtsim: warning: %s\n", k.describe().c_str());
}

void warn_does_not_fit(const WorkloadRun& run) {
  std::fprintf(stderr, "dtsim: warning: workload.name: %s needs %s per GPU but the %s has %s; timed anyway\n",
               run.workload.name.c_str(), format_quantity(run.memory.total(), Dimension::Bytes).c_str(),
               run.config.gpu.name.c_str(), format_quantity(run.config.gpu.memory, Dimension::Bytes).c_str());
}

// A proxy run charges a workload that its GPUs may not hold: said, as a timing-only run says it.
void warn_if_proxy_does_not_fit(const RunInputs& in) {
  if (!in.proxy) return;
  const RunConfig& c = in.config;
  const double needs = workload_memory_per_gpu(c, *in.proxy).total();
  for (const GpuSpec* gpu : gpus_in_use(c)) {
    if (needs <= gpu->memory) continue;
    std::fprintf(stderr, "dtsim: warning: workload.proxy: %s needs %s per GPU but the %s has %s; charged anyway\n",
                 in.proxy->name.c_str(), format_quantity(needs, Dimension::Bytes).c_str(), gpu->name.c_str(),
                 format_quantity(gpu->memory, Dimension::Bytes).c_str());
  }
}

int command_check(const CommandLine& cl) {
  require_scenario(cl);
  const Scenario scenario = load_scenario(cl.scenario, cl.sets);
  if (is_timing_only(scenario)) {
    const WorkloadRun run = prepare_workload_run(scenario);
    report_ignored_keys(cl, run.ignored_keys);
    if (!cl.quiet) std::printf("%s: ok (%s)\n", cl.scenario.c_str(), describe_workload_run(run).c_str());
    if (!run.fits) warn_does_not_fit(run);
    return kExitOk;
  }
  const RunInputs inputs = prepare_run(scenario);
  report_ignored_keys(cl, inputs.ignored_keys);
  if (!cl.quiet) std::printf("%s: ok (%s)\n", cl.scenario.c_str(), describe_setup(inputs).c_str());
  warn_if_proxy_does_not_fit(inputs);
  return kExitOk;
}

int exit_status_of_signal(int signal) { return 128 + signal; }

// Writes summary.json (and model.bin for a completed run) into the staging folder, renames the rows of a run
// that did not finish to metrics.partial.csv, and publishes everything into --out.
void finish_run(RunFolder& folder, const RunInputs& inputs, const RunResult& result, double wall) {
  const bool finished = result.status == RunStatus::Completed || result.status == RunStatus::Diverged;
  if (!finished) fs::rename(folder.staged("metrics.csv"), folder.staged("metrics.partial.csv"));
  if (!result.trace_json.empty()) write_file_atomically(folder.staging(), "trace.json", result.trace_json);
  if (!result.links_csv.empty()) write_file_atomically(folder.staging(), "links.csv", result.links_csv);
  write_file_atomically(folder.staging(), "summary.json", make_summary(inputs, result, wall).dump(2) + "\n");
  if (result.status == RunStatus::Completed && inputs.config.save_model) write_model(folder.staging(), result.final_params);
  folder.publish();
}

// A timing-only run of a catalog workload: no data, no numerics, no backend.
int command_run_workload(const CommandLine& cl, const Scenario& scenario, const std::function<double()>& wall) {
  const WorkloadRun run = prepare_workload_run(scenario);
  report_ignored_keys(cl, run.ignored_keys);
  if (!run.fits) warn_does_not_fit(run);
  RunFolder folder(cl.out.empty() ? "out/" + run.config.name : cl.out, cl.scenario);
  remove_on_early_stop(folder.staging(), "");  // it writes its files at the end: a stop before leaves nothing
  if (!cl.quiet) {
    std::printf("dtsim %s  %s\n", dtsim_version(), describe_workload_run(run).c_str());
    std::fflush(stdout);
  }
  const std::string text = run_workload(run, folder.staging(), wall);
  folder.publish();
  if (!cl.quiet)
    std::printf("%s  outputs      %s/{metrics.csv,summary.json%s}\n", text.c_str(), folder.out().c_str(),
                run.config.links ? ",links.csv" : "");
  return kExitOk;
}

int command_run(const CommandLine& cl) {
  require_scenario(cl);
  stop_on_signals();  // SIGINT and SIGTERM end the simulation at its next clock advance: status interrupted
  const auto wall_start = std::chrono::steady_clock::now();
  const auto wall = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count(); };
  const Scenario scenario = load_scenario(cl.scenario, cl.sets);
  if (is_timing_only(scenario)) return command_run_workload(cl, scenario, wall);
  const RunInputs inputs = prepare_run(scenario);
  report_ignored_keys(cl, inputs.ignored_keys);
  warn_if_proxy_does_not_fit(inputs);
  if (stop_signal() != 0) {
    std::fprintf(stderr, "dtsim: interrupted before the simulation started; no output written\n");
    return exit_status_of_signal(stop_signal());
  }
  RunFolder folder(cl.out.empty() ? "out/" + inputs.config.name : cl.out, cl.scenario);

  gpu::BackendChoice backend = gpu::make_backend(inputs.config.device);
  if (!cl.quiet) {
    std::printf("dtsim %s  %s\nbackend: %s\n", dtsim_version(), describe_setup(inputs).c_str(),
                backend.description.c_str());
    // A native build's results hold for its kind of CPU only: said before anything is read as a result.
    const gpu::NumericsFingerprint numerics = gpu::numerics_fingerprint(backend.ops->name());
    if (numerics.native()) std::printf("numerics: %s\n", describe_numerics(numerics).c_str());
    std::fflush(stdout);
  }
  const char* step_word = strategy_descriptor(inputs.config.strategy).row_step;
  LiveProgress live(!cl.quiet && terminal_wants_live(), step_word);
  MetricsLog metrics(folder.staged("metrics.csv"), [&cl, &live, step_word](const EvalPoint& p) {
    if (!cl.quiet) {
      live.clear();  // the progress line takes the live line's place; the next step draws it below
      std::printf("%s\n", progress_line(p, step_word).c_str());
      std::fflush(stdout);
    }
  });
  metrics.observe_steps([&live](int64_t step, int64_t total, double sim_time_s) { live.step(step, total, sim_time_s); });
  remove_on_early_stop(folder.staging(), folder.staged("metrics.csv"));
  RunResult result;
  try {
    result = run_training(inputs, metrics, backend);
  } catch (const std::exception& e) {
    // The rows measured so far and a summary saying what happened; then the error itself (exit 1 or 2).
    // (The simulated time is the last row's: the engine may be gone.)
    live.clear();
    const double reached = metrics.points().empty() ? 0.0 : metrics.points().back().sim_time_s;
    finish_run(folder, inputs, result_so_far(inputs, metrics, RunStatus::Failed, e.what(), reached), wall());
    throw;
  }
  live.clear();
  finish_run(folder, inputs, result, wall());
  // Under --strict a key found without effect once the run ended is an error too, found late: the outputs stay
  // (they are the run's), and the exit status is 2.
  for (const IgnoredKey& k : result.ignored_after_run)
    std::fprintf(stderr, "dtsim: %s: %s\n", cl.strict ? "error" : "warning", k.describe().c_str());
  if (result.status != RunStatus::Completed)
    std::fprintf(stderr, "dtsim: run %s: %s\n", to_string(result.status), result.status_reason.c_str());
  if (!cl.quiet) std::printf("%s", human_summary(inputs, result, wall(), folder.out()).c_str());
  if (result.status == RunStatus::Interrupted) return exit_status_of_signal(stop_signal());
  // A simulated job that failed (every worker lost) is not a result to build on: exit 1, as for a crash.
  if (result.status == RunStatus::Failed) return kExitInternal;
  if (cl.strict && !result.ignored_after_run.empty()) return kExitBadInput;
  return kExitOk;
}

}  // namespace

int dtsim_main(int argc, char** argv) {
  try {
    if (argc > 1 && std::string(argv[1]) == "collective") return command_collective(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "workload") return command_workload(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "sweep") return command_sweep(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "collect") return command_collect(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "compare") return command_compare(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "validate") return command_validate(argc - 1, argv + 1);
    const CommandLine cl = parse_command_line(argc, argv);
    if (cl.version) {
      std::printf("dtsim %s\nnumerics: %s\n", dtsim_version(), describe_numerics(gpu::numerics_fingerprint("cpu")).c_str());
      return kExitOk;
    }
    if (cl.help || cl.command.empty()) {
      std::fputs(kUsage, cl.help ? stdout : stderr);
      return cl.help ? kExitOk : kExitBadInput;
    }
    refuse_flags_not_read(cl);
    if (cl.command == "run") return command_run(cl);
    if (cl.command == "check") return command_check(cl);
    if (cl.command == "keys") return command_keys(parse_keys_format(cl.format));
    if (cl.command == "profiles") return command_profiles(cl.scenario.empty() ? default_profile_dir() : cl.scenario);
    const std::string near = suggest_among(cl.command, {"run", "check", "keys", "profiles", "collective", "workload", "sweep", "collect", "compare", "validate"});
    throw InputError("command line", "", "unknown command '" + cl.command + "'",
                     near.empty() ? "run 'dtsim --help'" : "did you mean '" + near + "'?");
  } catch (const InputError& e) {
    std::fprintf(stderr, "dtsim: error: %s\n", printable(e.what()).c_str());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtsim: internal error: %s\n", printable(e.what()).c_str());
    return kExitInternal;
  } catch (...) {
    std::fprintf(stderr, "dtsim: internal error: unknown exception\n");
    return kExitInternal;
  }
}

}  // namespace dtsim::sim
