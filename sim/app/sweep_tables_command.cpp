// `dtsim collect` and `dtsim compare`: a sweep's tables rebuilt from its run folders, and its groups (or the
// folders of separate runs) side by side.
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/app/flags.hpp"
#include "sim/app/sweep_command.hpp"
#include "sim/app/sweep_compare.hpp"
#include "sim/app/sweep_plan.hpp"
#include "sim/app/sweep_results.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/scenario/ini_file.hpp"
#include "sim/scenario/units.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace dtsim::sim {
namespace {

// A folder named on the command line: one that does not exist, or is not a folder, is said to be so (it used to
// be reported as a folder without sweep.json).
void require_folder(const std::string& dir) {
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (status.type() == fs::file_type::not_found)
    throw InputError(dir, "", "no such folder", "give a sweep's --out folder, or the --out folders of runs");
  if (ec) throw InputError(dir, "", "cannot be read (" + ec.message() + ")", "give a folder you can read");
  if (!fs::is_directory(status))
    throw InputError(dir, "", "is not a folder", "give a sweep's --out folder, or the --out folders of runs");
}

// Whether `dir` holds a sweep manifest (whatever kind of file it is: reading it says what is wrong with it).
bool holds_manifest(const std::string& dir) {
  std::error_code ec;
  return fs::symlink_status(fs::path(dir) / "sweep.json", ec).type() != fs::file_type::not_found;
}

// The sweep that `dir` holds, from its sweep.json.
SweepPlan read_sweep(const std::string& dir) {
  require_folder(dir);
  const fs::path manifest = fs::path(dir) / "sweep.json";
  if (!holds_manifest(dir))
    throw InputError(dir, "", "no sweep.json: not a folder 'dtsim sweep' wrote", "give the --out folder of a sweep");
  nlohmann::json m;
  try {
    m = nlohmann::json::parse(read_text_file(manifest.string(), "sweep manifest"));
  } catch (const nlohmann::json::exception&) {
    throw InputError(manifest.string(), "", "not a sweep manifest that dtsim can read", "rerun the sweep into a new folder");
  }
  return SweepPlan::from_manifest(m, manifest.string());
}

// A run whose summary.json could not be read counts as one without a result: said, naming the file and why, so
// that a '-' in a table or a smaller count is never left unexplained.
void warn_unreadable(const std::string& sweep_dir, const std::vector<RunRow>& rows) {
  for (const RunRow& r : rows)
    if (!r.unreadable_because.empty())
      std::fprintf(stderr, "dtsim: warning: %s: %s; the run counts as one without a result\n",
                   printable((fs::path(sweep_dir) / r.run->name / "summary.json").string()).c_str(),
                   printable(r.unreadable_because).c_str());
}

// Separate run folders as a plan of their own: one run per folder, told apart by its path (the "run" column).
SweepPlan plan_of_run_folders(const std::vector<std::string>& dirs) {
  SweepPlan plan;
  plan.scenario = "(run folders)";
  plan.varied.push_back({"run", dirs, "folder"});
  for (size_t i = 0; i < dirs.size(); ++i) {
    const std::string& dir = dirs[i];
    require_folder(dir);
    std::error_code ec;
    for (size_t j = 0; j < i; ++j)
      if (fs::equivalent(dirs[j], dir, ec))
        throw InputError("command line", "", "'" + dir + "' is given twice" + (dirs[j] == dir ? "" : " (as '" + dirs[j] + "')"),
                         "give each run folder once: a run counted twice would read as two runs");
    if (holds_manifest(dir))
      throw InputError(dir, "", "is a sweep folder; compare it on its own", "dtsim compare " + dir);
    if (fs::symlink_status(fs::path(dir) / "summary.json", ec).type() == fs::file_type::not_found) {
      if (dirs.size() == 1)
        throw InputError(dir, "", "holds neither sweep.json nor summary.json: not a folder that dtsim sweep or dtsim run wrote",
                         "give a sweep's --out folder, or the --out folders of runs");
      throw InputError(dir, "", "holds no summary.json (not a dtsim run folder, or a run that has not finished)",
                       "give folders that dtsim run --out wrote");
    }
    plan.runs.push_back({dir, {{"run", dir}}});
  }
  return plan;
}

}  // namespace

int command_collect(int argc, char** argv) {
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::fputs(sweep_help(), stdout);
    return 0;
  }
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--", 0) == 0)
      throw InputError("command line", argv[i], "'dtsim collect' takes no flags", "e.g. dtsim collect out/sweep-quickstart");
  if (argc != 2)
    throw InputError("command line", "", "'dtsim collect' takes one sweep folder", "e.g. dtsim collect out/sweep-quickstart");
  const std::string dir = argv[1];
  const SweepPlan plan = read_sweep(dir);
  const std::vector<RunRow> rows = collect_sweep_tables(dir, plan);
  warn_unreadable(dir, rows);
  size_t done = 0;
  for (const RunRow& r : rows) done += run_is_done(r) ? 1 : 0;
  std::printf("%s: %zu runs, %zu with a result; wrote results.csv and summary.csv\n", dir.c_str(), rows.size(), done);
  return 0;
}

int command_compare(int argc, char** argv) {
  po::options_description opts;
  opts.add_options()("columns", po::value<std::string>())("help,h", po::bool_switch());
  const po::variables_map vm = parse_command_flags(argc, argv, opts, "dir", "sweep");
  if (vm["help"].as<bool>()) {
    std::fputs(sweep_help(), stdout);
    return 0;
  }
  const std::vector<std::string> dirs = vm.count("dir") ? vm["dir"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (dirs.empty())
    throw InputError("command line", "", "'dtsim compare' needs a sweep folder or run folders",
                     "e.g. dtsim compare out/sweep-quickstart, or dtsim compare out/run-a out/run-b");
  // One sweep folder, or run folders made by separate `dtsim run`s (each its own row).
  if (dirs.size() == 1) require_folder(dirs.front());
  const bool one_sweep = dirs.size() == 1 && holds_manifest(dirs.front());
  const SweepPlan plan = one_sweep ? read_sweep(dirs.front()) : plan_of_run_folders(dirs);
  const std::vector<RunRow> rows = read_run_rows(one_sweep ? dirs.front() : "", plan);
  warn_unreadable(one_sweep ? dirs.front() : "", rows);
  std::vector<std::string> columns;
  if (vm.count("columns")) {
    columns = comma_list(vm["columns"].as<std::string>());
  } else {
    columns = default_compare_columns(rows);
    // Nothing to show: say why (no run folder has a result), not that --columns named nothing.
    if (columns.empty()) {
      std::map<std::string, int> statuses;
      for (const RunRow& r : rows) ++statuses[r.status];
      std::string described;
      for (const auto& [status, count] : statuses)
        described += (described.empty() ? "" : ", ") + std::to_string(count) + " " + status;
      throw InputError(one_sweep ? dirs.front() : std::string("command line"), "",
                       "no run has a number to compare (" + described + " summary.json)",
                       "finish or rerun the runs (dtsim sweep resumes a sweep), or name run folders that hold results");
    }
  }
  const VariedKey* seeds = plan.find_varied("run.seed");
  const std::string table = comparison_table(plan, rows, columns);  // checks the columns before printing anything
  if (one_sweep)
    std::printf("%s: %zu runs of %s%s\n\n", dirs.front().c_str(), rows.size(), plan.scenario.c_str(),
                seeds ? (", each number the mean ± sample std over " + std::to_string(seeds->values.size()) + " seeds").c_str()
                      : "");
  else
    std::printf("%zu run folder%s\n\n", rows.size(), rows.size() == 1 ? "" : "s");
  std::fputs(table.c_str(), stdout);
  if (const std::string warning = numerics_mismatch_warning(rows); !warning.empty()) {
    std::fflush(stdout);  // after the table, also where both go to one terminal or file
    std::fprintf(stderr, "dtsim: warning: %s\n", warning.c_str());
  }
  return 0;
}

}  // namespace dtsim::sim
