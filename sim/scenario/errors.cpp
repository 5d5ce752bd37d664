#include "sim/scenario/errors.hpp"

#include "sim/scenario/text.hpp"
#include "sim/scenario/units.hpp"

namespace dtsim::sim {
namespace {

std::string render(const std::string& where, const std::string& key, const std::string& reason,
                   const std::string& hint) {
  std::string msg;
  if (!where.empty()) msg += where + ": ";
  if (!key.empty()) msg += key + ": ";
  msg += reason;
  if (!hint.empty()) msg += "; " + hint;
  return printable(msg);  // parts may quote a file's bytes: never let them reach a terminal raw
}

}  // namespace

std::string Origin::describe() const {
  if (command_line) return "command line (" + (flag.empty() ? std::string("--set") : flag) + ")";
  if (file.empty()) return "default";
  return line > 0 ? file + ":" + std::to_string(line) : file;
}

InputError::InputError(const Origin& where, const std::string& key, const std::string& reason, const std::string& hint)
    : std::runtime_error(render(where.describe(), key, reason, hint)), key_(key) {}

InputError::InputError(const std::string& where, const std::string& key, const std::string& reason,
                       const std::string& hint)
    : std::runtime_error(render(where, key, reason, hint)), key_(key) {}

InputError InputError::rendered(const std::string& text, const std::string& key) { return {Rendered{}, text, key}; }

}  // namespace dtsim::sim
