#include "sim/app/flags.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/scenario/errors.hpp"

namespace dtsim::sim {

boost::program_options::variables_map parse_command_flags(int argc, char** argv,
                                                          boost::program_options::options_description named,
                                                          const char* positional_name, const std::string& command) {
  namespace po = boost::program_options;
  named.add_options()(positional_name, po::value<std::vector<std::string>>());
  po::positional_options_description positional;
  positional.add(positional_name, -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(named).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError("command line", "", e.what(), "run 'dtsim " + command + " --help'");
  }
  refuse_flags_as_values(vm, command);
  return vm;
}

void refuse_flags_as_values(const boost::program_options::variables_map& vm, const std::string& command) {
  const auto looks_like_flag = [](const std::string& v) {
    return v.size() > 2 && v.compare(0, 2, "--") == 0 && std::isalpha(static_cast<unsigned char>(v[2]));
  };
  for (const auto& [name, value] : vm) {
    std::vector<std::string> values;
    if (const auto* one = boost::any_cast<std::string>(&value.value())) values.push_back(*one);
    else if (const auto* many = boost::any_cast<std::vector<std::string>>(&value.value())) values = *many;
    for (const std::string& v : values)
      if (looks_like_flag(v))
        throw InputError("command line", "--" + name, "has no value: the next word is the flag '" + v + "'",
                         "give --" + name + " its value (run 'dtsim " + (command.empty() ? "" : command + " ") + "--help')");
  }
}

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

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> items;
  for (size_t start = 0; start <= text.size();) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

}  // namespace dtsim::sim
