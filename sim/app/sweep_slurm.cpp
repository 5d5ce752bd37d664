#include "sim/app/sweep_slurm.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <optional>

#include "models/input_file.hpp"
#include "sim/app/outputs.hpp"
#include "sim/app/sweep_pool.hpp"
#include "sim/scenario/errors.hpp"

namespace fs = std::filesystem;

namespace dtsim::sim {

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string slurm_array_script(const SweepPlan& plan, const std::string& out, const std::string& workdir,
                               const std::string& exe, bool strict) {
  const std::string log_dir = fs::absolute(fs::path(workdir) / out).lexically_normal().string();
  std::string command = shell_quoted(exe) + " sweep " + shell_quoted(plan.scenario);
  for (const VariedKey& v : plan.varied) {
    if (v.flag == "--seeds") {
      command += " --seeds " + std::to_string(v.values.size());
      continue;
    }
    std::string values;
    for (const std::string& value : v.values) values += (values.empty() ? "" : ",") + value;
    command += " --vary " + shell_quoted(v.key + "=" + values);
  }
  for (const std::string& s : plan.sets) command += " --set " + shell_quoted(s);
  command += " --out " + shell_quoted(out) + " --task \"$SLURM_ARRAY_TASK_ID\" --quiet";
  if (strict) command += " --strict";

  std::string script;
  script += "#!/bin/bash\n";
  script += "# A dtsim sweep of " + plan.scenario + " as a Slurm job array: " + std::to_string(plan.runs.size()) +
            " runs, one array task each.\n";
  script += std::string("# ") + kSlurmScriptMark + ". Submit with: sbatch THIS_FILE. Each task runs its run unless it already\n";
  script += "# has a result, then rebuilds results.csv and summary.csv from every run folder, so resubmitting resumes.\n";
  script += "#SBATCH --job-name=dtsim-sweep\n";
  script += "#SBATCH --array=0-" + std::to_string(plan.runs.size() - 1) + "\n";
  script += "#SBATCH --ntasks=1\n";
  script += "#SBATCH --cpus-per-task=1\n";
  script += "#SBATCH --output=" + log_dir + "/slurm-%A_%a.log\n";
  script += "set -euo pipefail\n";
  script += "cd " + shell_quoted(workdir) + "\n";
  script += "exec " + command + "\n";
  return script;
}

void check_slurm_script_path(const std::string& slurm, const std::string& out, const std::string& scenario) {
  const fs::path path = fs::absolute(slurm);
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw InputError("command line", "--slurm", "'" + slurm + "' is a folder",
                     "give the script's file name, e.g. " + (fs::path(slurm) / "sweep.sh").string());
  if (path.lexically_normal() == fs::absolute(out).lexically_normal())
    throw InputError("command line", "--slurm", "'" + slurm + "' is the sweep's --out folder",
                     "give the script a file name, e.g. " + (fs::path(out) / "sweep.sh").string());
  // The script's folder is made now, so that one that cannot be leaves nothing of the sweep behind.
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec || !fs::is_directory(path.parent_path()))
    throw InputError("command line", "--slurm", "cannot make the folder '" + path.parent_path().string() + "'" +
                                                    (ec ? ": " + ec.message() : ""),
                     "choose a folder you can write");
  // Anything at the path, a dangling link or a loop of links too, is looked at (the script would replace it).
  if (fs::symlink_status(path, ec).type() != fs::file_type::not_found) {
    if (fs::equivalent(path, scenario, ec))
      throw InputError("command line", "--slurm", "'" + slurm + "' is the sweep's scenario file",
                       "give the script another file name, e.g. sweep.sh");
    // Read as every input file is: a FIFO there would block the reader.
    models::InputFileProblem problem;
    const std::optional<std::string> existing = models::read_input_file(path.string(), models::kMaxTextInputBytes, problem);
    if (!existing)
      throw InputError("command line", "--slurm",
                       "'" + slurm + "' exists and " +
                           (problem.kind == models::InputFileProblem::Kind::Missing ? "is a link that leads nowhere"
                                                                                     : problem.reason),
                       "give the script another file name, or remove that file first");
    if (existing->find(kSlurmScriptMark) == std::string::npos)
      throw InputError("command line", "--slurm", "'" + slurm + "' exists and is not a script 'dtsim sweep --slurm' wrote",
                       "give the script another file name, or remove that file first");
  }
}

void write_slurm_script(const std::string& slurm, const SweepPlan& plan, const std::string& out, bool strict,
                        bool quiet) {
  const std::string text = slurm_array_script(plan, out, fs::current_path().string(), own_executable(), strict);
  const fs::path path = fs::absolute(slurm);
  try {
    write_file_atomically(path.parent_path().string(), path.filename().string(), text);
  } catch (const std::exception& e) {
    throw InputError("command line (--slurm)", "", e.what(), "choose a folder you can write");
  }
  ::chmod(path.c_str(), 0755);
  if (!quiet)
    std::printf("dtsim sweep: wrote %s, a Slurm job array of %zu tasks into %s; submit it with: sbatch %s\n",
                slurm.c_str(), plan.runs.size(), out.c_str(), slurm.c_str());
}

}  // namespace dtsim::sim
