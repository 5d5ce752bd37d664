#include "sim/app/flags.hpp"

#include <cerrno>
#include <cstdlib>

#include "sim/scenario/errors.hpp"

namespace dtsim::sim {

long whole_number_flag(const boost::program_options::variables_map& vm, const char* flag, long fallback, long lowest,
                       long highest) {
  if (!vm.count(flag)) return fallback;
  const std::string text = vm[flag].as<std::string>();
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < lowest || v > highest)
    throw InputError("command line", std::string("--") + flag,
                     "'" + text + "' is not a whole number from " + std::to_string(lowest) + " to " +
                         std::to_string(highest));
  return v;
}

}  // namespace dtsim::sim
