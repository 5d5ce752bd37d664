// `dtsim sweep --slurm FILE`: the same sweep as a Slurm job array, one array task per run. Each task runs
// `dtsim sweep ... --task $SLURM_ARRAY_TASK_ID`: that one run (skipped when it already has a result), then the
// tables rebuilt from every run folder. Resubmitting the script therefore resumes, as rerunning a sweep does.
#pragma once

#include <string>

#include "sim/app/sweep_plan.hpp"

namespace dtsim::sim {

// A line of every script slurm_array_script writes; `dtsim sweep --slurm` replaces only a file that has it.
inline constexpr const char* kSlurmScriptMark = "Written by 'dtsim sweep --slurm'";

// The script's text. `out` is the sweep's folder, `workdir` the folder relative paths are resolved from, `exe`
// the dtsim binary (absolute paths: the job may start elsewhere).
std::string slurm_array_script(const SweepPlan& plan, const std::string& out, const std::string& workdir,
                               const std::string& exe, bool strict);

// `text` quoted for a POSIX shell.
std::string shell_quoted(const std::string& text);

}  // namespace dtsim::sim
