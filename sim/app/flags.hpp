// Command-line flags shared by the dtsim commands that parse their own (collective, workload).
#pragma once

#include <boost/program_options.hpp>
#include <string>

namespace dtsim::sim {

// The whole number given to --`flag` (as text in `vm`), or `fallback` when absent; an InputError naming the flag
// unless it is a whole number from `lowest` to `highest`.
long whole_number_flag(const boost::program_options::variables_map& vm, const char* flag, long fallback, long lowest,
                       long highest);

}  // namespace dtsim::sim
