#include "sim/scenario/scenario.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "models/input_file.hpp"
#include "sim/scenario/ini_file.hpp"
#include "sim/scenario/text.hpp"

#ifndef DTSIM_SOURCE_PROFILE_DIR
#define DTSIM_SOURCE_PROFILE_DIR "network_profiles"
#endif

namespace fs = std::filesystem;

namespace dtsim::sim {
namespace {

// Sections whose fields can come from a profile file named by "<section>.profile".
const char* const kProfileSections[] = {"gpu", "fabric", "framework"};

// The sections a profile of `section` may set: its own; a framework profile also the [sync] and [compute] keys
// whose defaults it documents (bucket sizes, overlap, sharding, optimizer kernels).
bool profile_may_set(const std::string& section, const std::string& other) {
  if (other == section) return true;
  return section == "framework" && (other == "sync" || other == "compute");
}

std::string profile_sections_text(const std::string& section) {
  return section == "framework" ? "[framework], [sync] and [compute] sections" : "a [" + section + "] section";
}

// The hint of an unknown key: the nearest known one (of `only_section`'s keys, for a profile), else where to look.
std::string unknown_key_hint(const KeySchema& schema, const std::string& key, const std::string& only_section = "") {
  if (const std::string near = schema.suggest(key, only_section); !near.empty()) return "did you mean '" + near + "'?";
  if (!only_section.empty())
    return "a " + only_section + " profile sets [" + only_section + "] keys; run 'dtsim keys' to list them";
  const std::string section = key.substr(0, key.find('.'));
  return (schema.has_section(section) ? "" : "there is no section [" + section + "]; ") +
         std::string("run 'dtsim keys' to list the valid keys");
}

void check_value(const KeySpec& spec, const std::string& text, const Origin& where) {
  try {
    validate_value(spec, text);
  } catch (const ValueError& e) {
    throw InputError(where, spec.name, e.what(), e.hint());
  }
}

std::vector<std::string> available_profiles(const std::string& folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.path().extension() == ".ini" && entry.is_regular_file(ec))  // a folder named x.ini is no profile
      names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A profile value is a name in <profile_dir>/<section>/ or, when it looks like a path, a file relative to
// the scenario's folder.
std::string resolve_profile_path(const std::string& section, const std::string& value, const Origin& where,
                                 const std::string& key, const std::string& scenario_dir,
                                 const std::string& profile_dir) {
  const bool looks_like_path = value.find('/') != std::string::npos || fs::path(value).extension() == ".ini";
  if (looks_like_path) {
    fs::path p(value);
    if (p.is_relative() && !where.command_line && !scenario_dir.empty()) p = fs::path(scenario_dir) / p;
    if (const models::InputFileProblem problem = models::input_file_problem(p.string()))
      throw InputError(where, key, "profile file '" + p.string() + "' " + problem.reason,
                       problem.kind == models::InputFileProblem::Kind::Missing ? "" : "name a profile's .ini file");
    return p.string();
  }
  const std::string folder = (fs::path(profile_dir) / section).string();
  const fs::path p = fs::path(folder) / (value + ".ini");
  std::error_code ec;  // (a name too long for a file is no profile: said below, not thrown)
  if (fs::is_regular_file(p, ec)) return p.string();
  const auto names = available_profiles(folder);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  const std::string near = suggest_among(value, names);
  throw InputError(where, key, "no " + section + " profile named '" + value + "' in " + folder,
                   (near.empty() ? "" : "did you mean '" + near + "'? ") +
                       (list.empty() ? "set DTSIM_PROFILE_DIR to the network_profiles folder" : "available: " + list));
}

// Reads the profile `name` of `section` (see resolve_profile_path) and writes its entries into `values`.
// A template only because the value type is Scenario's private one.
template <class Value>
std::string apply_profile(const KeySchema& schema, std::map<std::string, Value>& values, const std::string& section, const std::string& name, const Origin& where,
                   const std::string& key, const std::string& scenario_dir, const std::string& profile_dir) {
  const std::string profile_key = section + ".profile";
  const std::string file = resolve_profile_path(section, name, where, key, scenario_dir, profile_dir);
  const IniFile profile = read_ini(file, section + " profile", schema.keys());
  for (const IniSection& s : profile.sections)
    if (!profile_may_set(section, s.name))
      throw InputError(Origin::at(file, s.line), "[" + s.name + "]",
                       "a " + section + " profile holds only " + profile_sections_text(section));
  for (const IniEntry& e : profile.entries) {
    const Origin at = Origin::at(file, e.line);
    if (!schema.find(e.key))
      throw InputError(at, e.key, "unknown key",
                       unknown_key_hint(schema, e.key, profile_may_set(section, "sync") ? "" : section));
    if (e.key == profile_key) throw InputError(at, e.key, "a profile cannot name another profile");
    values[e.key] = {e.value, at};
  }
  return file;
}

bool is_profile_section(const std::string& section) {
  for (const char* s : kProfileSections)
    if (section == s) return true;
  return false;
}

std::string missing_value_hint(const KeySpec& k) {
  return is_profile_section(k.section())
             ? "set it in the [" + k.section() + "] section or choose a " + k.section() + ".profile that does"
             : "set it in the [" + k.section() + "] section";
}

}  // namespace

std::string folder_from_environment(const char* variable, const std::string& fallback, const std::string& holds) {
  const char* env = std::getenv(variable);
  if (!env || !*env) return fallback;
  std::error_code ec;
  const fs::file_status status = fs::status(env, ec);
  if (fs::is_directory(status)) return env;
  const std::string why = status.type() == fs::file_type::not_found ? "not found"
                          : ec                                     ? "cannot be read (" + ec.message() + ")"
                                                                   : "is not a folder";
  throw InputError("environment", variable, "'" + std::string(env) + "' " + why,
                   "point it at a folder of " + holds + ", or unset it to use " + fallback);
}

std::string default_profile_dir() {
  return folder_from_environment("DTSIM_PROFILE_DIR", DTSIM_SOURCE_PROFILE_DIR, "gpu/, fabric/ and framework/ profiles");
}

Scenario Scenario::load(const KeySchema& schema, const std::string& path, const std::vector<std::string>& overrides,
                        const std::string& profile_dir) {
  Scenario sc = parse(schema, path, read_text_file(path, "scenario file"), overrides, profile_dir);
  // An empty file (or one of comments only) would run every default, which is rarely what was meant: refused,
  // unless --set says what to run.
  if (sc.file_keys_ == 0 && overrides.empty())
    throw InputError(path, "", "the scenario file sets no key (it is empty, or holds only comments and [sections])",
                     "write the keys to set ('dtsim keys' lists them), or start from scenarios/quickstart.ini; "
                     "to run every default, set one on the command line, e.g. --set run.name=defaults");
  return sc;
}

Scenario Scenario::parse(const KeySchema& schema, const std::string& name, const std::string& content,
                         const std::vector<std::string>& overrides, const std::string& profile_dir,
                         const std::vector<std::string>& override_flags) {
  Scenario sc;
  sc.schema_ = &schema;
  sc.path_ = name;
  sc.profile_dir_ = profile_dir;
  const IniFile ini = parse_ini(name, content, schema.keys());
  sc.file_keys_ = ini.entries.size();

  for (const IniSection& s : ini.sections) {
    if (!schema.has_section(s.name)) {
      const std::string near = suggest_among(s.name, schema.sections());
      throw InputError(Origin::at(name, s.line), "[" + s.name + "]", "unknown section",
                       near.empty() ? "run 'dtsim keys' to list the sections" : "did you mean [" + near + "]?");
    }
  }

  // 1. built-in defaults
  for (const KeySpec& k : schema.keys())
    if (!k.default_text.empty() || k.optional) sc.values_[k.name] = {k.default_text, Origin::default_value()};

  // 2. the scenario file and 3. the command line, checked for names now and for values once merged
  std::map<std::string, Value> explicit_values;
  for (const IniEntry& e : ini.entries) {
    const Origin where = Origin::at(name, e.line);
    if (!schema.find(e.key)) throw InputError(where, e.key, "unknown key", unknown_key_hint(schema, e.key));
    explicit_values[e.key] = {e.value, where};
  }
  std::map<std::string, std::string> set_by;  // key -> the flag that set it on the command line
  for (size_t i = 0; i < overrides.size(); ++i) {
    const std::string& item = overrides[i];
    const Origin where = Origin::from_command_line(i < override_flags.size() ? override_flags[i] : "--set");
    // The same hygiene as a file's lines: no control character or invalid UTF-8 reaches a value.
    if (const size_t bad = find_unprintable(item); bad != std::string_view::npos)
      throw InputError(where, "",
                       where.flag + " '" + item + "' holds a control character or a byte that is not UTF-8 at column " +
                           std::to_string(bad + 1),
                       "type the value as plain text");
    const size_t eq = item.find('=');
    const std::string key = trim(item.substr(0, eq));
    if (eq == std::string::npos || key.find('.') == std::string::npos)
      throw InputError(where, key, "expected --set section.key=value, got '" + item + "'");
    if (!schema.find(key)) throw InputError(where, key, "unknown key", unknown_key_hint(schema, key));
    // A key given twice on the command line (two --set, or a command's own flag such as dtsim collective's
    // --ranks and a --set) would drop one of the two values without a word, as a file's key set twice would.
    if (const auto first = set_by.find(key); first != set_by.end())
      throw InputError(where, key,
                       "is set twice on the command line (by " + first->second + " = '" + explicit_values[key].text +
                           "' and " + where.flag + " = '" + trim(item.substr(eq + 1)) + "')",
                       "give it once");
    set_by[key] = where.flag;
    explicit_values[key] = {trim(item.substr(eq + 1)), where};
  }

  // Profiles sit between the defaults and the explicit values.
  const std::string scenario_dir = fs::path(name).parent_path().string();
  std::map<std::string, std::string> profile_files;  // section → the profile file applied
  for (const char* section : kProfileSections) {
    const std::string profile_key = std::string(section) + ".profile";
    const auto it = explicit_values.find(profile_key);
    const auto fallback = sc.values_.find(profile_key);
    if (it == explicit_values.end() && fallback == sc.values_.end()) continue;  // a schema without the section
    const Value chosen = it != explicit_values.end() ? it->second : fallback->second;
    if (trim(chosen.text).empty()) continue;
    profile_files[section] = apply_profile(schema, sc.values_, section, trim(chosen.text), chosen.origin, profile_key,
                                           scenario_dir, profile_dir);
  }
  for (auto& [key, v] : explicit_values) sc.values_[key] = v;

  // Every value checked against the schema; every key without a default must have been given.
  for (const KeySpec& k : schema.keys()) {
    const auto it = sc.values_.find(k.name);
    if (it == sc.values_.end()) {
      // A profile in use that lacks the field is the file to fix (the scenario may still override it).
      const auto profile = profile_files.find(k.section());
      const InputError missing =
          profile != profile_files.end()
              ? InputError(Origin::at(profile->second, 0), k.name, "the " + k.section() + " profile does not set " + k.field(),
                           "add '" + k.field() + " = …' to the profile, or set " + k.name + " in the scenario")
              : InputError(Origin::at(name, 0), k.name, "has no value", missing_value_hint(k));
      if (!is_profile_section(k.section())) throw missing;
      sc.values_[k.name] = {"", Origin::default_value()};
      sc.unset_.emplace(k.name, missing);
      continue;
    }
    check_value(k, it->second.text, it->second.origin);
  }
  if (trim(sc.values_["run.name"].text).empty())
    sc.values_["run.name"] = {fs::path(name).stem().string(), Origin::default_value()};
  return sc;
}

bool Scenario::has(const std::string& key) const { return values_.count(key) > 0; }

const Scenario::Value& Scenario::value(const std::string& key) const {
  const auto it = values_.find(key);
  if (it == values_.end()) throw std::logic_error("scenario key '" + key + "' is not in the schema");
  if (const auto unset = unset_.find(key); unset != unset_.end()) throw unset->second;
  return it->second;
}

const std::string& Scenario::text(const std::string& key) const { return value(key).text; }
int64_t Scenario::integer(const std::string& key) const { return parse_int(text(key)); }
double Scenario::real(const std::string& key) const { return parse_real(text(key)); }
bool Scenario::boolean(const std::string& key) const { return parse_bool(text(key)); }
std::vector<int64_t> Scenario::int_list(const std::string& key) const { return parse_int_list(text(key)); }
const Origin& Scenario::origin(const std::string& key) const {
  const auto it = values_.find(key);
  if (it == values_.end()) throw std::logic_error("scenario key '" + key + "' is not in the schema");
  return it->second.origin;  // an unset key's is the default's: nobody gave it
}

std::string Scenario::file_path(const std::string& key) const {
  const std::string path = trim(text(key));
  const Origin& where = origin(key);
  // The file that set it: the scenario, or a profile (whose tables sit beside it).
  const std::string& from = where.file.empty() ? path_ : where.file;
  if (path.empty() || !std::filesystem::path(path).is_relative() || where.command_line || from.empty()) return path;
  return (std::filesystem::path(from).parent_path() / path).lexically_normal().string();
}

double Scenario::quantity(const std::string& key) const {
  const KeySpec* spec = schema_->find(key);
  if (!spec || spec->type != ValueType::Quantity) throw std::logic_error("'" + key + "' is not a quantity key");
  return parse_quantity(text(key), spec->dim);
}

void Scenario::fail_at_set(const std::vector<std::string>& keys, const std::string& reason,
                           const std::string& hint) const {
  origins().fail_at_set(keys, reason, hint);
}

KeyOrigins Scenario::origins() const {
  std::map<std::string, Origin> where;
  for (const auto& [key, value] : values_) where.emplace(key, value.origin);
  return KeyOrigins(path_, std::move(where));
}

void Scenario::fail(const std::string& key, const std::string& reason, const std::string& hint) const {
  (void)origin(key);  // an unknown key is a programming error, as for the getters
  KeyOrigins(path_, {{key, origin(key)}}).fail(key, reason, hint);
}

Scenario Scenario::with_profile(const std::string& section, const std::string& name, const std::string& key) const {
  if (!is_profile_section(section)) throw std::logic_error("'" + section + "' has no profiles");
  const Origin& where = origin(key);
  Scenario out = *this;
  for (const KeySpec& k : schema_->keys()) {
    if (k.section() != section) continue;
    out.unset_.erase(k.name);
    if (!k.default_text.empty() || k.optional)
      out.values_[k.name] = {k.default_text, Origin::default_value()};
    else
      out.values_.erase(k.name);
  }
  out.values_[section + ".profile"] = {name, where};
  apply_profile(*schema_, out.values_, section, trim(name), where, key, fs::path(path_).parent_path().string(), profile_dir_);
  for (const KeySpec& k : schema_->keys()) {
    if (k.section() != section) continue;
    const auto it = out.values_.find(k.name);
    if (it == out.values_.end())
      throw InputError(where, key, "the " + section + " profile '" + trim(name) + "' does not set " + k.name,
                       "use a complete profile");
    check_value(k, it->second.text, it->second.origin);
  }
  return out;
}

std::vector<std::string> Scenario::command_line_sets() const {
  std::vector<std::string> sets;
  for (const auto& [key, v] : values_)
    if (v.origin.command_line) sets.push_back(key + "=" + v.text);
  return sets;
}

nlohmann::json Scenario::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const KeySpec& k : schema_->keys()) {
    nlohmann::json& slot = out[k.section()][k.field()];
    if (unset_.count(k.name)) {  // a section on no node, left without a value
      slot = nullptr;
      continue;
    }
    const std::string& t = text(k.name);
    switch (k.type) {
      case ValueType::Int: slot = k.optional && trim(t).empty() ? nlohmann::json(nullptr) : nlohmann::json(integer(k.name)); break;
      case ValueType::Real: slot = real(k.name); break;
      case ValueType::Bool: slot = boolean(k.name); break;
      case ValueType::Quantity: slot = quantity(k.name); break;
      case ValueType::IntList: slot = int_list(k.name); break;
      case ValueType::Text:
      case ValueType::Choice: slot = trim(t); break;
    }
  }
  return out;
}

}  // namespace dtsim::sim
