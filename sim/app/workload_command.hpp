// `dtsim workload [NAME] [options]`: the workload catalog (models/workloads/), one workload's totals and
// per-layer figures, and its memory per GPU against a GPU profile's memory with ZeRO and checkpointing.
#pragma once

#include <string>

namespace dtsim::sim {

// The catalog folder: $DTSIM_WORKLOAD_DIR, else the source tree's models/workloads/.
std::string default_workload_dir();

// argv[0] is "workload". Returns the exit status; bad input throws InputError.
int command_workload(int argc, char** argv);

}  // namespace dtsim::sim
