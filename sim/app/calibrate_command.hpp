// `dtsim calibrate --out DIR`: measures this machine's backend (matrix products over a sweep of shapes, a
// memory-bound kernel, an empty call) and writes DIR/gpu.ini, a GPU profile that runs read with
// gpu.profile = DIR/gpu.ini, and DIR/calibration.csv, every measurement beside the profile's time for it.
#pragma once

namespace dtsim::sim {

// argv[0] is "calibrate". Returns the exit status; bad input throws InputError.
int command_calibrate(int argc, char** argv);

}  // namespace dtsim::sim
