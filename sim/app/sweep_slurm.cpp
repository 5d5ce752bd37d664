#include "sim/app/sweep_slurm.hpp"

#include <filesystem>

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

}  // namespace dtsim::sim
