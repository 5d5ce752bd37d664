// `dtsim workload [NAME] [options]`: the workload catalog (models/workloads/), one workload's totals and
// per-layer figures, and its memory per GPU against a GPU profile's memory with ZeRO and checkpointing.
#pragma once

#include <string>

#include "sim/config/workload_config.hpp"  // default_workload_dir

namespace dtsim::sim {

// argv[0] is "workload". Returns the exit status; bad input throws InputError.
int command_workload(int argc, char** argv);

}  // namespace dtsim::sim
