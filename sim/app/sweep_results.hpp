// A sweep's tables, built from its run folders alone (so `dtsim collect` rebuilds exactly what `dtsim sweep`
// wrote): results.csv, one row per planned run with its varied values, its status, its headline numbers from
// summary.json and, last, the summary's status_reason (a completed run that collapsed says so there), and summary.csv, the runs grouped over seeds with mean, std, min and max per number.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/app/sweep_plan.hpp"

namespace dtsim::sim {

struct RunRow {
  const SweepRun* run = nullptr;
  // The summary's status (completed, diverged, interrupted, failed); "missing" when the folder holds no
  // summary.json (never started, or killed before it published), "unreadable" when it cannot be read (not a
  // regular file, not JSON, a headline field that is not a number).
  std::string status;
  std::string status_reason;              // the summary's, in its words ("" without one)
  std::string unreadable_because;         // why an unreadable summary is, naming the field when one is wrong
  std::map<std::string, double> numbers;  // column name -> value, only those the summary has
  std::string currency;                   // of its costs ("" when the run has no price)
  // What computed its numbers (summary.json's numerics): the fingerprint, and how the fingerprint's build is
  // described ("x86-64-v3", "native"); both "" for a timing-only run or one made before dtsim recorded them.
  std::string numerics_fingerprint;
  std::string numerics_build;
};

// A run counts as done, and a rerun of the sweep skips it, when its summary says completed, diverged or
// failed: those are results. An interrupted or missing run is run again.
bool run_is_done(const RunRow& row);
// The statuses that are results (completed, diverged, failed), as opposed to interrupted or unknown ones.
bool status_is_result(const std::string& status);

RunRow read_run_row(const std::string& sweep_dir, const SweepRun& run);
std::vector<RunRow> read_run_rows(const std::string& sweep_dir, const SweepPlan& plan);

// The headline columns, in the order the tables print them; a table keeps those that some run has.
const std::vector<std::string>& headline_columns();

// The runs that share their values of the varied keys other than run.seed, in the order their first run appears.
struct RunGroup {
  std::vector<std::string> values;  // of SweepPlan::group_keys()
  std::vector<const RunRow*> runs;
};
std::vector<RunGroup> group_over_seeds(const SweepPlan& plan, const std::vector<RunRow>& rows);

// One headline column over some runs: those with a result (completed, diverged or failed; not an interrupted
// run's partial numbers) that have it, their mean, sample standard deviation (n - 1; 0 for one value), min
// and max.
struct ColumnStats {
  size_t n = 0;
  double mean = 0.0, std = 0.0, min = 0.0, max = 0.0;
};
ColumnStats column_stats(const std::vector<const RunRow*>& runs, const std::string& column);

std::string results_csv(const SweepPlan& plan, const std::vector<RunRow>& rows);
// One row per combination of the varied keys other than run.seed: runs, their statuses, then for each
// headline number <name>_mean, _std (sample standard deviation, empty for fewer than two values), _min and
// _max over the runs that have it.
std::string summary_csv(const SweepPlan& plan, const std::vector<RunRow>& rows);

// Writes results.csv and summary.csv into `sweep_dir`, each replaced atomically.
void write_sweep_tables(const std::string& sweep_dir, const SweepPlan& plan, const std::vector<RunRow>& rows);
// Reads every run folder and writes both tables, holding the folder's table lock throughout, so that when several
// processes collect at once (Slurm array tasks, each after publishing its run) the last to write saw every run
// published before it started. Returns the rows read.
std::vector<RunRow> collect_sweep_tables(const std::string& sweep_dir, const SweepPlan& plan);

}  // namespace dtsim::sim
