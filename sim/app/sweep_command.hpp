// `dtsim sweep`: a scenario run over the Cartesian product of --vary lists and seeds, in parallel processes,
// resumable, with results.csv and summary.csv; `dtsim collect`: the two tables rebuilt from a sweep's folders.
#pragma once

namespace dtsim::sim {

// argv[0] is "sweep" / "collect". Exit status: 0 when every run has a result, 2 bad input, 1 when a run ended
// without one (its log is named), 128 + signal when the sweep was stopped.
int command_sweep(int argc, char** argv);
int command_collect(int argc, char** argv);
int command_compare(int argc, char** argv);

// `dtsim sweep --help`, which collect and compare print too.
const char* sweep_help();

}  // namespace dtsim::sim
