// Errors a user can fix: a bad scenario, profile, flag or dataset. dtsim prints them as one line and
// exits with status 2. Everything else that goes wrong is an internal error (status 1).
#pragma once

#include <stdexcept>
#include <string>

namespace dtsim::sim {

// Where a value came from: a file and 1-based line, the command line (with the flag that set it), or a
// built-in default.
struct Origin {
  std::string file;  // empty for the command line and for defaults
  int line = 0;
  bool command_line = false;
  std::string flag;  // command line: the flag that set the value ("--set", "--gpus-per-node", …)

  static Origin default_value() { return {}; }
  static Origin from_command_line(std::string flag = "--set") { return {"", 0, true, std::move(flag)}; }
  static Origin at(std::string file, int line) { return {std::move(file), line, false, ""}; }
  std::string describe() const;  // "scenarios/a.ini:12", "command line (--set)", "default"
};

class InputError : public std::runtime_error {
 public:
  // Renders "<where>: <key>: <reason>; <hint>" with empty parts left out.
  InputError(const Origin& where, const std::string& key, const std::string& reason, const std::string& hint = "");
  InputError(const std::string& where, const std::string& key, const std::string& reason, const std::string& hint = "");
  const std::string& key() const { return key_; }
  // An error whose text is rendered already (a command rephrasing another error for its own flags).
  static InputError rendered(const std::string& text, const std::string& key);

 private:
  struct Rendered {};
  InputError(Rendered, const std::string& text, const std::string& key) : std::runtime_error(text), key_(key) {}
  std::string key_;
};

}  // namespace dtsim::sim
