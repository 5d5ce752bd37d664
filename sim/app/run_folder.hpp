// Where one `dtsim run` writes: a lock on the --out folder, so that two live runs never share it; a private
// staging folder inside it, where the run's files grow; and publishing, which moves them into --out when the
// run ends, summary.json last. A reader of --out therefore sees either the previous run's files or the new
// ones, and summary.json always describes the metrics beside it. A run that crashes before publishing leaves
// --out as it was and its rows in the staging folder, named partial-run-<pid>.
#pragma once

#include <string>
#include <vector>

namespace dtsim::sim {

class RunFolder {
 public:
  // Creates `out` if needed and locks it (a run claims its folder before loading anything, so that a second run
  // into it is refused at once, not after its own data is loaded). Throws InputError at --out when it cannot be created or written,
  // or when another live run holds it (naming that run's process, start time and scenario).
  RunFolder(const std::string& out, const std::string& scenario);
  ~RunFolder();  // releases the lock; an unpublished staging folder stays
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;

  const std::string& out() const { return out_; }
  const std::string& staging() const { return staging_; }
  std::string staged(const std::string& name) const;  // staging()/name

  // Moves every file of the staging folder into --out. The files an earlier run left there that this run does
  // not replace (dtsim's own outputs only: summary.json, metrics*.csv, model.bin, trace.json) are removed first, so that
  // nothing of two runs is mixed; summary.json moves last. Then removes the staging folder.
  void publish();

  // Undoes what claiming the folder made, for a run refused before it ran (bad input found once the folder was
  // claimed, or a stop): the staging folder goes, and so do the lock file and --out itself (with the parents it
  // lacked) when this run made it.
  void abandon();
  // The same as paths to remove in order (each a file or an empty folder), for a stop signal's handler, with
  // `first` (the staged metrics file) before them when given.
  std::vector<std::string> abandon_paths(const std::string& first = "") const;

  // The file names dtsim writes into --out.
  static const std::vector<std::string>& output_names();
  // Files that analysis/ writes into a run's folder by default (report.py's report.html, plot_run.py's
  // run.png): derived from the run's outputs, so publishing a new run removes them with the old outputs.
  static const std::vector<std::string>& derived_names();

 private:
  std::string out_;
  std::string staging_;
  int lock_fd_ = -1;
  bool published_ = false;
  std::vector<std::string> made_;  // the folders this run made for --out, deepest first
};

}  // namespace dtsim::sim
