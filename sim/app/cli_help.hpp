// The help texts of `dtsim --help` and of the commands that the top-level parser reads (run, check, keys,
// profiles); the other commands hold their own (sweep_command.cpp, collective_command.cpp, ...).
#pragma once

#include <string>

namespace dtsim::sim {

// `dtsim --help`: every command with what it does; each command's flags are in its own help.
const char* general_usage();

// `dtsim COMMAND --help` for run, check, keys and profiles; nullptr for another command.
const char* command_help(const std::string& command);

}  // namespace dtsim::sim
