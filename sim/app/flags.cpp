#include "sim/app/flags.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "models/name_table.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/scenario/keys.hpp"

namespace dtsim::sim {
namespace {

// Whether `name` is one of the hidden options that positional arguments fill (a scenario, a folder, a name).
bool is_positional(const boost::program_options::positional_options_description& positional, const std::string& name) {
  for (unsigned i = 0; i < positional.max_total_count() && i <= 16; ++i)  // (the last name repeats for ever)
    if (positional.name_for_position(i) == name) return true;
  return false;
}

}  // namespace

boost::program_options::variables_map parse_flags_in_full(int argc, char** argv,
                                                          const boost::program_options::options_description& options,
                                                          const boost::program_options::positional_options_description& positional,
                                                          const std::string& command) {
  namespace po = boost::program_options;
  const std::string help = "run 'dtsim " + (command.empty() ? "" : command + " ") + "--help'";
  po::variables_map vm;
  try {
    // Boost takes the start of a flag for the one flag it starts (--r for --ranks) unless told not to: a flag
    // is written in full, so that a typo never picks a flag the user did not mean.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(argc, argv).options(options).positional(positional).style(style).run(), vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    const std::string typed = e.get_option_name();
    std::vector<std::string> flags, starting;
    for (const auto& option : options.options()) {
      const std::string name = option->long_name();
      if (name.empty() || is_positional(positional, name)) continue;
      flags.push_back("--" + name);
      if (typed.size() > 2 && flags.back().rfind(typed, 0) == 0) starting.push_back(flags.back());
    }
    const std::string near = starting.size() == 1 ? starting.front() : suggest_among(typed, flags);
    throw InputError("command line", typed, "unknown flag" + std::string(starting.empty() ? "" : " (flags are written in full)"),
                     starting.size() > 1 ? "did you mean " + models::join_names(starting, ", ", " or ") + "? " + help
                     : near.empty()      ? help
                                         : "did you mean " + near + "? " + help);
  } catch (const po::error& e) {
    throw InputError("command line", "", e.what(), help);
  }
  refuse_flags_as_values(vm, command);
  return vm;
}

boost::program_options::variables_map parse_command_flags(int argc, char** argv,
                                                          boost::program_options::options_description named,
                                                          const char* positional_name, const std::string& command) {
  namespace po = boost::program_options;
  named.add_options()(positional_name, po::value<std::vector<std::string>>());
  po::positional_options_description positional;
  positional.add(positional_name, -1);
  return parse_flags_in_full(argc, argv, named, positional, command);
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
