#include "sim/app/sweep_command.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "models/name_table.hpp"
#include "sim/app/flags.hpp"
#include "sim/app/outputs.hpp"
#include "sim/app/sweep_compare.hpp"
#include "sim/app/sweep_plan.hpp"
#include "sim/app/sweep_pool.hpp"
#include "sim/app/sweep_results.hpp"
#include "sim/app/sweep_slurm.hpp"
#include "sim/app/workload_run.hpp"
#include "sim/config/run_inputs.hpp"
#include "sim/config/schema.hpp"
#include "sim/config/workload_config.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/scenario/ini_file.hpp"
#include "sim/scenario/keys.hpp"
#include "sim/scenario/text.hpp"
#include "sim/scenario/units.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace dtsim::sim {
namespace {

const char* const kSweepHelp =
    "usage: dtsim sweep SCENARIO.ini --vary section.key=v1,v2,... [--vary ...] [--seeds N] [--jobs N]\n"
    "                   [--out DIR] [--set section.key=value]... [--strict] [--quiet] [--slurm FILE]\n"
    "       dtsim collect DIR\n"
    "       dtsim compare DIR [--columns name,name,...]\n"
    "       dtsim compare RUN_DIR RUN_DIR... [--columns name,name,...]\n"
    "\n"
    "Runs the scenario once for every combination of the --vary values (the Cartesian product; --seeds N adds\n"
    "run.seed = 1..N), each as its own 'dtsim run' process, at most --jobs at a time, into DIR/<key=value,...>/,\n"
    "with its output in dtsim.log there. Every combination is checked before anything runs. Then writes\n"
    "DIR/results.csv (one row per run: its values, status and headline numbers) and DIR/summary.csv (the runs\n"
    "grouped over seeds: mean, std, min and max of each number).\n"
    "\n"
    "A rerun of the same command skips the runs that have a result (completed, diverged or failed) and runs the\n"
    "others again (interrupted, or never finished); DIR/sweep.json records the sweep, and a different sweep into\n"
    "the same DIR is refused. Ctrl-C (or SIGTERM) stops every run, which keeps what it measured as interrupted.\n"
    "'dtsim collect DIR' rebuilds both tables from the run folders; 'dtsim compare DIR' prints the groups side by\n"
    "side (mean ± std over seeds; --columns picks results.csv columns, e.g. final_test_accuracy,cost_mid);\n"
    "given the folders of separate 'dtsim run's instead, it prints one row per folder.\n"
    "\n"
    "  --vary K=V1,V2,...  a scenario key and its values, comma-separated (repeatable; the last changes fastest)\n"
    "  --seeds N           run.seed = 1, 2, ..., N (or vary run.seed yourself)\n"
    "  --jobs N            runs at once (default: the number of CPU cores)\n"
    "  --out DIR           the sweep's folder (default out/sweep-<scenario file name>)\n"
    "  --set K=V           a key set for every run (repeatable)\n"
    "  --strict            a key with no effect in some run is an error, not a warning\n"
    "  --quiet             print nothing but errors and warnings\n"
    "  --slurm FILE        check the sweep, then write FILE, a Slurm job-array script with one task per run\n"
    "                      (submit it with sbatch; resubmitting resumes), instead of running anything here\n"
    "  --task I            run only run I (from 0, in the order above) and rebuild the tables: what each array\n"
    "                      task of the --slurm script does\n"
    "\n"
    "exit status: 0 every run has a result, 2 bad input, 1 a run ended without a result, 128+N stopped by signal N\n";

struct SweepFlags {
  std::string scenario;
  std::vector<std::string> vary;
  long seeds = 0;
  long jobs = 1;
  std::string out;
  std::vector<std::string> sets;
  bool strict = false;
  bool quiet = false;
  bool help = false;
  std::string slurm;  // --slurm FILE
  long task = -1;     // --task I
};

SweepFlags parse_sweep_flags(int argc, char** argv) {
  po::options_description opts;
  opts.add_options()("vary", po::value<std::vector<std::string>>()->composing())("seeds", po::value<std::string>())(
      "jobs", po::value<std::string>())("out", po::value<std::string>())(
      "set", po::value<std::vector<std::string>>()->composing())("strict", po::bool_switch())(
      "quiet", po::bool_switch())("help,h", po::bool_switch())("slurm", po::value<std::string>())(
      "task", po::value<std::string>());
  const po::variables_map vm = parse_command_flags(argc, argv, opts, "scenario", "sweep");
  SweepFlags f;
  f.help = vm["help"].as<bool>();
  if (f.help) return f;
  if (vm.count("scenario")) {
    const auto names = vm["scenario"].as<std::vector<std::string>>();
    if (names.size() > 1) throw InputError("command line", "", "unexpected argument '" + names[1] + "'", "run 'dtsim sweep --help'");
    f.scenario = names.front();
  }
  if (f.scenario.empty())
    throw InputError("command line", "", "'dtsim sweep' needs a scenario file",
                     "e.g. dtsim sweep scenarios/quickstart.ini --vary training.lr=0.05,0.1 --seeds 2");
  if (vm.count("vary")) f.vary = vm["vary"].as<std::vector<std::string>>();
  if (vm.count("set")) f.sets = vm["set"].as<std::vector<std::string>>();
  f.seeds = whole_number_flag(vm, "seeds", 0, 1, 100000);
  const long cores = std::max(1u, std::thread::hardware_concurrency());
  f.jobs = whole_number_flag(vm, "jobs", cores, 1, 4096);
  if (vm.count("out")) {
    f.out = vm["out"].as<std::string>();
    if (f.out.empty()) throw InputError("command line", "--out", "an empty folder name", "give a folder, e.g. --out out/study");
  }
  if (f.out.empty()) f.out = "out/sweep-" + fs::path(f.scenario).stem().string();
  f.strict = vm["strict"].as<bool>();
  f.quiet = vm["quiet"].as<bool>();
  if (vm.count("slurm")) f.slurm = vm["slurm"].as<std::string>();
  f.task = whole_number_flag(vm, "task", -1, 0, 10000000);
  if (!f.slurm.empty() && f.task >= 0)
    throw InputError("command line", "--task", "a task runs one run of a sweep; it cannot write a Slurm script",
                     "drop --slurm or --task");
  if (f.vary.empty() && f.seeds == 0)
    throw InputError("command line", "--vary", "nothing to sweep",
                     "give --vary section.key=v1,v2,... or --seeds N (for one run, use 'dtsim run')");
  return f;
}

// Keys that only seed random streams: they take part in no rule across keys, so runs that differ only in them
// are checked once, and each of their values once against its key alone.
bool is_seed_key(const std::string& key) { return key.rfind("run.", 0) == 0 && key.find("seed") != std::string::npos; }

void check_seed_values(const VariedKey& v) {
  const KeySpec* spec = find_key(v.key);
  if (spec == nullptr) return;  // an unknown key: parse_scenario names it
  for (const std::string& value : v.values) {
    try {
      validate_value(*spec, value);
    } catch (const ValueError& e) {
      throw InputError(Origin::from_command_line(v.flag), v.key, e.what(), e.hint());
    }
  }
}

// The runs that share one combination of the varied values other than the seeds.
size_t seed_runs_per_combination(const SweepPlan& plan) {
  size_t n = 1;
  for (const VariedKey& v : plan.varied)
    if (is_seed_key(v.key)) n *= v.values.size();
  return n;
}

// Every run still to do is checked before any of them starts, so that a bad value fails the sweep at once,
// naming the --vary that gave it: fully, as `dtsim check` does (its dataset read and split, the model built,
// so that a batch larger than the data or a compressor that would never compress is found), once for each
// combination of the varied values other than the seeds; the runs that differ from a checked one only in
// their seeds are not checked again (a sweep of 100,000 seeds took 200 s here, 2 ms a run). A varied key that
// has no effect in some run is an error: the runs would differ in name only.
void check_runs(const SweepPlan& plan, const std::vector<RunRow>& rows, bool strict, bool quiet) {
  // The sweep names each run's folder after its values; run.name would only relabel the runs' summaries.
  if (const VariedKey* v = plan.find_varied("run.name"))
    throw InputError("command line (" + v->flag + ")", v->key,
                     "is varied but has no effect in a sweep: each run's folder is named after its varied values, "
                     "so the runs would differ in name only",
                     "drop it from the sweep");
  load_scenario(plan.scenario, plan.sets);  // the file's own errors and the --set ones, named as 'dtsim run' names them
  const std::string content = read_text_file(plan.scenario, "scenario file");
  for (const VariedKey& v : plan.varied)
    if (is_seed_key(v.key)) check_seed_values(v);
  std::set<std::string> checked;  // the varied values, seeds left out, of the runs checked
  std::set<std::string> warned;
  // Each check loads the data: many combinations take a while, which a line every few seconds says.
  const size_t combinations = plan.runs.size() / std::max<size_t>(1, seed_runs_per_combination(plan));
  const auto started = std::chrono::steady_clock::now();
  auto last_said = started;
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    if (run_is_done(rows[i])) continue;
    const SweepRun& run = plan.runs[i];
    std::string values;
    for (const auto& [key, value] : run.values)
      if (!is_seed_key(key)) values += key + "=" + value + "\n";
    if (!checked.insert(values).second) continue;
    if (const auto now = std::chrono::steady_clock::now();
        !quiet && now - started > std::chrono::seconds(2) && now - last_said > std::chrono::seconds(5)) {
      std::printf("dtsim sweep: checking the runs before any starts: %zu of %zu combinations checked\n",
                  checked.size() - 1, combinations);
      std::fflush(stdout);
      last_said = now;
    }
    std::vector<std::string> overrides = plan.sets;
    std::vector<std::string> flags(plan.sets.size(), "--set");
    for (const auto& [key, value] : run.values) {
      overrides.push_back(key + "=" + value);
      flags.push_back(plan.find_varied(key)->flag);
    }
    const Scenario scenario = parse_scenario(plan.scenario, content, overrides, default_profile_dir(), flags);
    std::vector<IgnoredKey> ignored, warnings;
    if (is_timing_only(scenario)) {
      WorkloadRun prepared = prepare_workload_run(scenario);
      ignored = std::move(prepared.ignored_keys);
      warnings = std::move(prepared.warnings);
    } else {
      RunInputs prepared = prepare_run(scenario);
      ignored = std::move(prepared.ignored_keys);
      warnings = std::move(prepared.warnings);
    }
    for (const IgnoredKey& k : ignored) {
      if (const VariedKey* v = plan.find_varied(k.key))
        throw InputError("command line (" + v->flag + ")", k.key, "is varied but " + k.reason + " (in run " + run.name + ")",
                         "drop it from the sweep, or also set what makes it matter");
      if (strict)
        throw InputError(k.where, k.key, k.reason + " (in run " + run.name + ")", "remove it, or run without --strict");
    }
    for (const auto* keys : {&ignored, &warnings})
      for (const IgnoredKey& k : *keys)
        if (warned.insert(k.describe()).second) std::fprintf(stderr, "dtsim: warning: %s\n", k.describe().c_str());
  }
}

// One sweep per folder at a time: a second 'dtsim sweep' into it is refused while the first runs.
class SweepLock {
 public:
  explicit SweepLock(const std::string& dir) {
    const std::string path = (fs::path(dir) / ".dtsim-sweep.lock").string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw InputError("command line (--out)", "", "cannot write in folder '" + dir + "'", "choose another --out");
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw InputError("command line (--out)", "", "another 'dtsim sweep' is running in '" + dir + "'",
                       "wait for it to end, or choose another --out");
    }
  }
  ~SweepLock() { ::close(fd_); }
  SweepLock(const SweepLock&) = delete;
  SweepLock& operator=(const SweepLock&) = delete;

 private:
  int fd_ = -1;
};

// The other way round from dtsim run's check: a run's folder is not a sweep's (checked before the sweep
// writes its lock there).
void refuse_run_folder(const std::string& dir) {
  if (!fs::exists(fs::path(dir) / "sweep.json") && fs::exists(fs::path(dir) / "summary.json"))
    throw InputError("command line (--out)", "", "'" + dir + "' is a run's folder (it holds summary.json)",
                     "choose another --out for the sweep");
}

// sweep.json: written the first time; a rerun must describe the same sweep.
void claim_folder(const std::string& dir, const SweepPlan& plan) {
  const fs::path path = fs::path(dir) / "sweep.json";
  refuse_run_folder(dir);
  std::error_code ec;
  if (fs::symlink_status(path, ec).type() != fs::file_type::not_found) {
    nlohmann::json recorded;
    try {
      recorded = nlohmann::json::parse(read_text_file(path.string(), "sweep manifest"));
    } catch (const nlohmann::json::exception&) {
      throw InputError(path.string(), "", "not a sweep manifest that dtsim can read", "choose another --out, or remove the folder");
    }
    nlohmann::json wanted = plan.manifest();
    if (recorded.contains("scenario_absolute")) {
      // The same file reached from another folder is the same sweep; the same file with other bytes is not.
      if (recorded["scenario_absolute"] == wanted["scenario_absolute"] &&
          recorded.value("scenario_crc32", std::string()) != wanted["scenario_crc32"].get<std::string>())
        throw InputError("command line (--out)", "",
                         "'" + dir + "' holds a sweep of " + recorded.value("scenario", std::string("?")) +
                             " as it was before the file changed (its finished runs were made from the old file)",
                         "choose another --out, or remove that folder to start over");
      recorded.erase("scenario");
      wanted.erase("scenario");
    } else {  // a manifest written before dtsim recorded the file's place and bytes: compared as it was
      wanted.erase("scenario_absolute");
      wanted.erase("scenario_crc32");
    }
    // The --set flags in any order, and their values however spelt (600 and 6e2), are the same sweep: a key
    // can be set once only.
    for (nlohmann::json* m : {&recorded, &wanted}) {
      if (!m->contains("sets") || !(*m)["sets"].is_array()) continue;
      for (nlohmann::json& set : (*m)["sets"])
        if (set.is_string()) {
          const auto [key, meaning] = set_meaning(set.get<std::string>());
          set = key + "=" + meaning;
        }
      std::sort((*m)["sets"].begin(), (*m)["sets"].end());
    }
    if (recorded != wanted) {
      std::vector<std::string> differ;  // what a user would change: the flags or the file
      for (const auto& [field, name] : std::vector<std::pair<std::string, std::string>>{
               {"scenario_absolute", "the scenario file"}, {"sets", "the --set flags"},
               {"vary", "the --vary or --seeds flags"}, {"format", "the manifest's format"}})
        if (recorded.value(field, nlohmann::json()) != wanted.value(field, nlohmann::json())) differ.push_back(name);
      throw InputError("command line (--out)", "",
                       "'" + dir + "' holds a different sweep (of " + recorded.value("scenario_absolute",
                           recorded.value("scenario", std::string("?"))) + "; " +
                           (differ.empty() ? std::string("see its sweep.json")
                                           : models::join_names(differ, ", ", " and ") + " differ") + ")",
                       "choose another --out, or remove that folder to start over");
    }
    return;
  }
  write_file_atomically(dir, "sweep.json", plan.manifest().dump(2) + "\n");
}

// A run folder about to be run again: the staging folders that killed runs left there go (their rows were never
// published), unless a live 'dtsim run' holds the folder.
void clear_leftovers(const fs::path& folder) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  const int fd = ::open((folder / ".dtsim-run.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    for (const auto& entry : fs::directory_iterator(folder, ec))
      if (entry.is_directory() && entry.path().filename().string().rfind("partial-run-", 0) == 0)
        fs::remove_all(entry.path(), ec);
    ::flock(fd, LOCK_UN);
  }
  ::close(fd);
}

std::string headline(const RunRow& row) {
  char text[96] = "";
  if (const auto a = row.numbers.find("final_test_accuracy"); a != row.numbers.end())
    std::snprintf(text, sizeof text, ", final accuracy %.4f", a->second);
  else if (const auto s = row.numbers.find("step_s"); s != row.numbers.end())
    std::snprintf(text, sizeof text, ", step %.4g s", s->second);
  return text;
}

// The last non-empty line of a log: what a run that ended without a result said last.
std::string last_line_of(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

PoolTask run_task_of(const SweepFlags& f, const SweepPlan& plan, const SweepRun& run, const std::string& exe) {
  const fs::path folder = fs::path(f.out) / run.name;
  clear_leftovers(folder);
  PoolTask task;
  task.argv = {exe, "run", plan.scenario, "--out", folder.string()};
  for (const std::string& o : plan.sets) task.argv.insert(task.argv.end(), {"--set", o});
  for (const std::string& o : run.overrides()) task.argv.insert(task.argv.end(), {"--set", o});
  if (f.strict) task.argv.push_back("--strict");
  task.log = (folder / "dtsim.log").string();
  return task;
}

// One run of the sweep, as a Slurm array task runs it: no sweep lock (the other tasks run at the same time; each
// run folder has its own), the run unless it already has a result, then the tables from every folder.
int run_task(const SweepFlags& f, const SweepPlan& plan) {
  if (f.task >= static_cast<long>(plan.runs.size()))
    throw InputError("command line", "--task",
                     std::to_string(f.task) + " is not a run of this sweep (it has " + std::to_string(plan.runs.size()) + ", from 0)");
  // The scenario and the --set flags are read before anything is written, as a sweep reads them (the run itself
  // checks the rest): a scenario that cannot be read is bad input here, not a run without a result.
  load_scenario(plan.scenario, plan.sets);
  std::error_code ec;
  fs::create_directories(f.out, ec);
  if (ec) throw InputError("command line (--out)", "", "cannot create folder '" + f.out + "': " + ec.message(), "choose another --out");
  claim_folder(f.out, plan);
  const SweepRun& run = plan.runs[static_cast<size_t>(f.task)];
  RunRow row = read_run_row(f.out, run);
  int stopped_by = 0;
  if (!run_is_done(row)) {
    stopped_by = run_pool({run_task_of(f, plan, run, own_executable())}, 1, [](const PoolExit&) {});
    row = read_run_row(f.out, run);
  }
  collect_sweep_tables(f.out, plan);
  if (!f.quiet) std::printf("%s: %s%s\n", run.name.c_str(), row.status.c_str(), headline(row).c_str());
  if (stopped_by != 0) return 128 + stopped_by;
  return run_is_done(row) ? 0 : 1;
}

}  // namespace

int command_sweep(int argc, char** argv) {
  const SweepFlags f = parse_sweep_flags(argc, argv);
  if (f.help) {
    std::fputs(kSweepHelp, stdout);
    return 0;
  }
  std::vector<VariedKey> varied;
  for (const std::string& v : f.vary) varied.push_back(parse_vary(v));
  if (f.seeds > 0) varied.push_back(seeds_as_vary(f.seeds));
  const SweepPlan plan = make_sweep_plan(f.scenario, f.sets, varied);

  if (f.task >= 0) return run_task(f, plan);
  // Checked before the folder is made: a refused sweep leaves nothing behind.
  check_runs(plan, read_run_rows(f.out, plan), f.strict, f.quiet);
  if (!f.slurm.empty()) check_slurm_script_path(f.slurm, f.out, plan.scenario);
  std::error_code ec;
  fs::create_directories(f.out, ec);
  if (ec) throw InputError("command line (--out)", "", "cannot create folder '" + f.out + "': " + ec.message(), "choose another --out");
  refuse_run_folder(f.out);
  const SweepLock lock(f.out);
  claim_folder(f.out, plan);
  std::vector<RunRow> rows = read_run_rows(f.out, plan);  // again, now that no other sweep can change them
  if (!f.slurm.empty()) {
    write_slurm_script(f.slurm, plan, f.out, f.strict, f.quiet);
    return 0;
  }

  std::vector<size_t> todo;
  for (size_t i = 0; i < rows.size(); ++i)
    if (!run_is_done(rows[i])) todo.push_back(i);
  const std::string exe = own_executable();
  std::vector<PoolTask> tasks;
  for (const size_t i : todo) tasks.push_back(run_task_of(f, plan, plan.runs[i], exe));
  const int jobs = static_cast<int>(std::min<long>(f.jobs, std::max<size_t>(1, tasks.size())));
  if (!f.quiet) {
    if (todo.empty())
      std::printf("dtsim sweep: %zu runs of %s into %s: every run has a result already; nothing to run\n",
                  plan.runs.size(), plan.scenario.c_str(), f.out.c_str());
    else
      std::printf("dtsim sweep: %zu runs of %s into %s: %zu with a result already, %zu to run, %d at a time\n",
                  plan.runs.size(), plan.scenario.c_str(), f.out.c_str(), plan.runs.size() - todo.size(), todo.size(),
                  jobs);
    std::fflush(stdout);
  }

  size_t ended = 0;
  std::vector<std::string> without_result;
  const int stopped_by = run_pool(tasks, jobs, [&](const PoolExit& e) {
    const size_t i = todo[e.task];
    rows[i] = read_run_row(f.out, plan.runs[i]);
    ++ended;
    const fs::path log = fs::path(tasks[e.task].log);
    if (!run_is_done(rows[i]) && rows[i].status != "interrupted") {
      // A run killed by a signal (exit 128 + n) wrote no last word of its own: say which signal, then the last
      // line of its log (a progress line, or a backtrace).
      std::string why = last_line_of(log);
      if (e.exit_code > 128) {
        const char* name = sigabbrev_np(e.exit_code - 128);
        why = "killed by signal " + std::to_string(e.exit_code - 128) + (name ? std::string(" (SIG") + name + ")" : "") +
              (why.empty() ? "" : "; its log's last line: " + why);
      }
      without_result.push_back(plan.runs[i].name + " (exit " + std::to_string(e.exit_code) + ": " + why + ")");
    }
    if (!f.quiet) {
      std::printf("[%zu/%zu] %s: %s%s\n", ended, todo.size(), plan.runs[i].name.c_str(), rows[i].status.c_str(),
                  headline(rows[i]).c_str());
      std::fflush(stdout);
    }
  });
  write_sweep_tables(f.out, plan, rows);
  if (!f.quiet) std::printf("tables: %s/results.csv, %s/summary.csv\n", f.out.c_str(), f.out.c_str());
  if (stopped_by != 0) {
    std::fprintf(stderr, "dtsim: sweep stopped by signal %d; rerun the same command to finish it\n", stopped_by);
    return 128 + stopped_by;
  }
  for (const std::string& w : without_result) std::fprintf(stderr, "dtsim: run without a result: %s\n", w.c_str());
  return without_result.empty() ? 0 : 1;
}

const char* sweep_help() { return kSweepHelp; }

}  // namespace dtsim::sim
