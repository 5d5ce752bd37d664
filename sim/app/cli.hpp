// The dtsim command line: run, check, keys. Returns the process exit status: 0 success, 2 bad input
// (scenario, profile, flag or dataset), 1 internal error.
#pragma once

namespace dtsim::sim {

int dtsim_main(int argc, char** argv);

}  // namespace dtsim::sim
