#include "sim/scenario/errors.hpp"

#include "sim/scenario/text.hpp"
#include "sim/scenario/units.hpp"

namespace dtsim::sim {
namespace {

std::string render(const std::string& where, const std::string& key, const std::string& reason,
                   const std::string& hint) {
  // Parts may quote a file's bytes: never let them reach a terminal raw, nor a pasted megabyte fill it (each part
  // keeps its start and end, so that the line still names the place, the key, the reason and the hint).
  const auto part = [](const std::string& text) { return elide_middle(printable(text), 400); };
  std::string msg;
  if (!where.empty()) msg += part(where) + ": ";
  if (!key.empty()) msg += part(key) + ": ";
  msg += part(reason);
  if (!hint.empty()) msg += "; " + part(hint);
  return msg;
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
