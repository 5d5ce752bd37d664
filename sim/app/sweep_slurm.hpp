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

// The script replaces only a script this command wrote: never the scenario, a folder or any other file at the
// path (a FIFO, a link). InputError at --slurm otherwise; checked before the sweep's folder is made, so that a
// refusal leaves nothing behind (the script's own folder is made here).
void check_slurm_script_path(const std::string& slurm, const std::string& out, const std::string& scenario);
// Writes the script at `slurm` (atomically, executable) for the sweep into `out`; says so unless `quiet`.
void write_slurm_script(const std::string& slurm, const SweepPlan& plan, const std::string& out, bool strict,
                        bool quiet);

// `text` quoted for a POSIX shell.
std::string shell_quoted(const std::string& text);

}  // namespace dtsim::sim
