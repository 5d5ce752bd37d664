#include "sim/app/cli.hpp"

#include <boost/program_options.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "models/name_table.hpp"
#include "sim/app/cli_help.hpp"
#include "sim/app/flags.hpp"
#include "sim/app/calibrate_command.hpp"
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
  bool empty_scenario = false;     // given, as ''
  std::optional<std::string> extra;  // the first argument after the scenario (none is expected)
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

  // The command's own help in the hints, once the command is known to be one that this parser reads.
  const std::string command = argc > 1 && command_help(argv[1]) ? argv[1] : "";
  const po::variables_map vm = parse_flags_in_full(argc, argv, all, positional, command);
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
  cl.empty_scenario = vm.count("scenario") && cl.scenario.empty();
  if (vm.count("extra")) cl.extra = vm["extra"].as<std::vector<std::string>>().front();
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
// errors), or with --strict an error at the first of them. Then the keys that act, but likely not as meant:
// warnings, --strict or not.
void report_keys(const CommandLine& cl, const std::vector<IgnoredKey>& ignored, const std::vector<IgnoredKey>& warnings) {
  if (cl.strict && !ignored.empty()) {
    const IgnoredKey& first = ignored.front();
    const std::string more =
        ignored.size() > 1 ? " (and " + std::to_string(ignored.size() - 1) + " more such keys)" : std::string();
    throw InputError(first.where, first.key, first.reason + more, "remove it, or run without --strict");
  }
  for (const auto* keys : {&ignored, &warnings})
    for (const IgnoredKey& k : *keys) std::fprintf(stderr, "dtsim: warning: %s\n", k.describe().c_str());
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
    report_keys(cl, run.ignored_keys, run.warnings);
    if (!cl.quiet) std::printf("%s: ok (%s)\n", cl.scenario.c_str(), describe_workload_run(run).c_str());
    if (!run.fits) warn_does_not_fit(run);
    return kExitOk;
  }
  const RunInputs inputs = prepare_run(scenario);
  report_keys(cl, inputs.ignored_keys, inputs.warnings);
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

// What prepares a run in its claimed folder: bad input (or anything else) found there leaves the folder as it was.
template <class Prepare>
auto before_the_run(RunFolder& folder, Prepare&& prepare) {
  try {
    return prepare();
  } catch (...) {
    folder.abandon();
    throw;
  }
}

// A timing-only run of a catalog workload: no data, no numerics, no backend.
int command_run_workload(const CommandLine& cl, const Scenario& scenario, RunFolder& folder,
                         const std::function<double()>& wall) {
  const WorkloadRun run = before_the_run(folder, [&] {
    WorkloadRun prepared = prepare_workload_run(scenario);
    report_keys(cl, prepared.ignored_keys, prepared.warnings);
    return prepared;
  });
  if (!run.fits) warn_does_not_fit(run);
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
  // The folder is claimed before anything is loaded, so that a second run into it is refused at once (the lock
  // used to be taken once the data was loaded: two runs started 0.3 s apart both ran, the later replacing the
  // other). Until the run starts, a stop signal or bad input leaves it as it was.
  RunFolder folder(cl.out.empty() ? "out/" + run_name(scenario) : cl.out, cl.scenario);
  remove_on_early_stop(folder.abandon_paths());
  if (is_timing_only(scenario)) return command_run_workload(cl, scenario, folder, wall);
  const RunInputs inputs = before_the_run(folder, [&] {
    RunInputs prepared = prepare_run(scenario);
    report_keys(cl, prepared.ignored_keys, prepared.warnings);
    return prepared;
  });
  warn_if_proxy_does_not_fit(inputs);
  if (stop_signal() != 0) {
    folder.abandon();
    std::fprintf(stderr, "dtsim: interrupted before the simulation started; no output written\n");
    return exit_status_of_signal(stop_signal());
  }

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
  remove_on_early_stop(folder.abandon_paths(folder.staged("metrics.csv")));
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
  // A key found without effect only once the run ended (a failure planned after its end) is a warning, under
  // --strict too: --strict refuses before anything runs, as 'dtsim check --strict' does, or not at all (it used
  // to exit 2 after the run had replaced the previous outputs).
  for (const IgnoredKey& k : result.ignored_after_run)
    std::fprintf(stderr, "dtsim: warning: %s%s\n", k.describe().c_str(),
                 cl.strict ? " (found once the run ended, so --strict could not refuse it)" : "");
  if (result.status != RunStatus::Completed)
    std::fprintf(stderr, "dtsim: run %s: %s\n", to_string(result.status), result.status_reason.c_str());
  if (!cl.quiet) std::printf("%s", human_summary(inputs, result, wall(), folder.out()).c_str());
  if (result.status == RunStatus::Interrupted) return exit_status_of_signal(stop_signal());
  // A simulated job that failed (every worker lost) is not a result to build on: exit 1, as for a crash.
  if (result.status == RunStatus::Failed) return kExitInternal;
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
    if (argc > 1 && std::string(argv[1]) == "calibrate") return command_calibrate(argc - 1, argv + 1);
    const CommandLine cl = parse_command_line(argc, argv);
    if (cl.version) {
      // --version takes nothing else: an argument or flag beside it would be dropped without a word.
      if (!cl.command.empty() || !cl.given.empty() || cl.help) {
        const std::string other = !cl.command.empty() ? cl.command : !cl.given.empty() ? "--" + cl.given.front() : "--help";
        throw InputError("command line", "--version", "takes no argument or other flag (got '" + other + "')",
                         "run 'dtsim --version' alone");
      }
      std::printf("dtsim %s\nnumerics: %s\n", dtsim_version(), describe_numerics(gpu::numerics_fingerprint("cpu")).c_str());
      return kExitOk;
    }
    // An unknown command is bad input whatever follows it, --help too.
    if (!cl.command.empty() && !command_help(cl.command)) {
      const std::string near = suggest_among(cl.command, {"run", "check", "keys", "profiles", "collective", "workload", "sweep", "collect", "compare", "validate", "calibrate"});
      throw InputError("command line", "", "unknown command '" + cl.command + "'",
                       near.empty() ? "run 'dtsim --help'" : "did you mean '" + near + "'?");
    }
    if (cl.help) {
      std::fputs(cl.command.empty() ? general_usage() : command_help(cl.command), stdout);
      return kExitOk;
    }
    // Refused once the command is known to exist, so that an unknown command is named as such first.
    const std::string help = "run 'dtsim " + cl.command + " --help'";
    if (cl.empty_scenario)
      throw InputError("command line", "", "an empty " + std::string(cl.command == "profiles" ? "folder" : "scenario") + " name", help);
    if (cl.extra) throw InputError("command line", "", "unexpected argument '" + *cl.extra + "'", help);
    if (cl.command.empty()) {
      std::fputs(general_usage(), stderr);
      return kExitBadInput;
    }
    refuse_flags_not_read(cl);
    if (cl.command == "run") return command_run(cl);
    if (cl.command == "check") return command_check(cl);
    if (cl.command == "keys") return command_keys(parse_keys_format(cl.format));
    return command_profiles(cl.scenario.empty() ? default_profile_dir() : cl.scenario);
  } catch (const InputError& e) {
    std::fprintf(stderr, "dtsim: error: %s\n", printable(e.what()).c_str());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtsim: internal error: %s\n", elide_middle(printable(e.what()), 2000).c_str());
    return kExitInternal;
  } catch (...) {
    std::fprintf(stderr, "dtsim: internal error: unknown exception\n");
    return kExitInternal;
  }
}

}  // namespace dtsim::sim
