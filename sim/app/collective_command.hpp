// `dtsim collective`: one collective at doubling sizes on a simulated cluster, printed in the layout of
// nccl-tests so that it can be set beside real measurements.
#pragma once

#include <string>
#include <vector>

namespace dtsim::sim {

// argv[0] is "collective". Returns the exit status; throws InputError for bad flags (exit 2 in dtsim_main).
int command_collective(int argc, char** argv);

// "8B:1GB" → 8, 16, 32, … up to the largest power-of-two multiple of the first size not above the last
// (units as in scenario files: GB = 10^9 B, GiB = 2^30 B). One size alone ("64MiB") is a list of one.
// Throws InputError naming --sizes.
std::vector<unsigned long long> parse_size_range(const std::string& text);

}  // namespace dtsim::sim
