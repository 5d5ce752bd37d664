// Command-line flags shared by the dtsim commands that parse their own (collective, workload).
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

namespace dtsim::sim {

// argv (argv[0] the command's name) parsed with `options` and `positional`, each flag written in full (Boost
// would take --r for --ranks); an unknown flag is an InputError that names the flags it may have meant, any other
// bad flag one that points at 'dtsim <command> --help' ('dtsim --help' when `command` is empty).
boost::program_options::variables_map parse_flags_in_full(int argc, char** argv,
                                                          const boost::program_options::options_description& options,
                                                          const boost::program_options::positional_options_description& positional,
                                                          const std::string& command);

// argv (argv[0] the command's name) parsed with `named`, every positional argument collected under
// `positional_name`; a bad flag is an InputError that points at 'dtsim <command> --help'.
boost::program_options::variables_map parse_command_flags(int argc, char** argv,
                                                          boost::program_options::options_description named,
                                                          const char* positional_name, const std::string& command);

// An InputError when a flag's value looks like another flag ("--ranks --format csv" gives --ranks the value
// "--format"): the user left that flag's value out. Call after parsing, before reporting stray arguments (the
// stray one would be the other flag's value, a confusing thing to blame).
void refuse_flags_as_values(const boost::program_options::variables_map& vm, const std::string& command);

// The whole number given to --`flag` (as text in `vm`), or `fallback` when absent; an InputError naming the flag
// unless it is a whole number from `lowest` to `highest`.
long whole_number_flag(const boost::program_options::variables_map& vm, const char* flag, long fallback, long lowest,
                       long highest);

// The items of a comma-separated flag value ("a,b,,c" → a, b, c): empty items are dropped.
std::vector<std::string> comma_list(const std::string& text);

}  // namespace dtsim::sim
