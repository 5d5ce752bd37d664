// `dtsim profiles [DIR]`: every GPU and fabric profile in a profile folder, loaded exactly as a scenario
// would load it, shown with its main numbers in two aligned tables.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "sim/config/hardware_config.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

// The .ini files of <profile_dir>/<section>/ ("gpu" or "fabric"), sorted; an InputError if the folder is missing.
std::vector<std::string> profile_files(const std::string& profile_dir, const std::string& section);

// Loads one profile file through Scenario::parse, the other section filled with stand-ins so that the file is
// checked on its own. Throws InputError naming the file (and line) of the first problem.
Scenario load_profile(const std::string& section, const std::string& file, const std::string& profile_dir);

// Prints both tables to `out`; returns the exit status (0). A profile that fails to load throws InputError.
int command_profiles(const std::string& profile_dir, std::FILE* out = stdout);

}  // namespace dtsim::sim
