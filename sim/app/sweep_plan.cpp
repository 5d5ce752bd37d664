#include "sim/app/sweep_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "sim/app/outputs.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/scenario/keys.hpp"
#include "sim/scenario/text.hpp"
#include "sim/scenario/units.hpp"

namespace dtsim::sim {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSeedKey = "run.seed";

std::string folder_safe(const std::string& text) {
  std::string out = text;
  for (char& ch : out) {
    const unsigned char c = static_cast<unsigned char>(ch);
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '+' || c == '-';
    if (!keep) ch = '_';
  }
  return out;
}

std::vector<std::string> split_at_commas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    parts.push_back(trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

std::string name_of(const std::vector<std::pair<std::string, std::string>>& values) {
  std::string name;
  for (const auto& [key, value] : values) name += (name.empty() ? "" : ",") + folder_safe(key) + "=" + folder_safe(value);
  return name;
}

}  // namespace

std::vector<std::string> SweepRun::overrides() const {
  std::vector<std::string> out;
  for (const auto& [key, value] : values) out.push_back(key + "=" + value);
  return out;
}

const std::string* SweepRun::value_of(const std::string& key) const {
  for (const auto& [k, v] : values)
    if (k == key) return &v;
  return nullptr;
}

const VariedKey* SweepPlan::find_varied(const std::string& key) const {
  for (const VariedKey& v : varied)
    if (v.key == key) return &v;
  return nullptr;
}

std::vector<std::string> SweepPlan::group_keys() const {
  std::vector<std::string> keys;
  for (const VariedKey& v : varied)
    if (v.key != kSeedKey) keys.push_back(v.key);
  return keys;
}

bool SweepPlan::varies_seed() const {
  return std::any_of(varied.begin(), varied.end(), [](const VariedKey& v) { return v.key == kSeedKey; });
}

// What a value means for its key: a number or quantity by its value (0.1 and 1e-1, 25GB/s and 200Gbps are one
// run twice), anything else, or a value the key would refuse (the run says why), by its text.
std::string value_meaning(const std::string& key, const std::string& value) {
  const KeySpec* spec = find_key(key);
  if (!spec) return value;
  try {
    char text[40];
    switch (spec->type) {
      case ValueType::Int: return std::to_string(parse_int(value));
      case ValueType::Real: std::snprintf(text, sizeof text, "%.17g", parse_real(value)); return text;
      case ValueType::Quantity: std::snprintf(text, sizeof text, "%.17g", parse_quantity(value, spec->dim)); return text;
      default: return value;
    }
  } catch (const ValueError&) {
    return value;
  }
}

std::pair<std::string, std::string> set_meaning(const std::string& item) {
  const size_t eq = item.find('=');
  if (eq == std::string::npos) return {item, ""};
  const std::string key = item.substr(0, eq);
  return {key, value_meaning(key, item.substr(eq + 1))};
}

VariedKey parse_vary(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("command line (--vary)", "", "'" + text + "' is not section.key=v1,v2,...",
                     "e.g. --vary fabric.profile=ib-hdr-200,roce-100");
  VariedKey v;
  v.key = text.substr(0, eq);
  v.flag = "--vary";
  if (v.key.find('.') == std::string::npos)
    throw InputError("command line (--vary)", v.key, "a key is section.key", "e.g. --vary training.lr=0.05,0.1");
  v.values = split_at_commas(text.substr(eq + 1));
  for (const std::string& value : v.values)
    if (value.empty())
      throw InputError("command line (--vary)", v.key, "an empty value in '" + text.substr(eq + 1) + "'",
                       "give one or more values separated by commas, none of them empty");
  return v;
}

VariedKey seeds_as_vary(long count) {
  VariedKey v;
  v.key = kSeedKey;
  v.flag = "--seeds";
  for (long s = 1; s <= count; ++s) v.values.push_back(std::to_string(s));
  return v;
}

SweepPlan make_sweep_plan(const std::string& scenario, const std::vector<std::string>& sets,
                          const std::vector<VariedKey>& varied, size_t max_runs) {
  SweepPlan plan;
  plan.scenario = scenario;
  plan.sets = sets;
  plan.varied = varied;
  std::map<std::string, std::string> keys;  // varied key -> the flag that varied it first
  size_t runs = 1;
  for (const VariedKey& v : varied) {
    const std::string where = "command line (" + v.flag + ")";
    if (const auto [first, fresh] = keys.emplace(v.key, v.flag); !fresh)
      throw InputError(where, v.key, "varied twice",
                       first->second != v.flag ? "give either --seeds or --vary run.seed, not both"
                                               : "put all its values in one --vary");
    std::map<std::string, std::string> seen;  // a value as the key reads it -> the value as written
    for (const std::string& value : v.values) {
      const auto [first, fresh] = seen.emplace(value_meaning(v.key, value), value);
      if (!fresh)
        throw InputError(where, v.key,
                         first->second == value ? "the value '" + value + "' is listed twice"
                                                : "the values '" + first->second + "' and '" + value + "' are the same",
                         "list each value once");
    }
    runs *= v.values.size();
    if (runs > max_runs)
      throw InputError(where, v.key, "the sweep would have more than " + std::to_string(max_runs) + " runs",
                       "vary fewer keys or values");
  }
  for (const std::string& set : sets) {
    const std::string key = set.substr(0, set.find('='));
    if (keys.count(key))
      throw InputError("command line (--set)", key, "is also varied", "drop the --set, or the --vary");
  }
  // Odometer order: the last varied key changes fastest.
  std::vector<size_t> index(varied.size(), 0);
  std::map<std::string, std::string> names;  // folder name -> the run's overrides, for collisions
  for (size_t r = 0; r < runs; ++r) {
    SweepRun run;
    for (size_t k = 0; k < varied.size(); ++k) run.values.emplace_back(varied[k].key, varied[k].values[index[k]]);
    run.name = varied.empty() ? "run" : name_of(run.values);
    std::string described;
    for (const std::string& o : run.overrides()) described += (described.empty() ? "" : " ") + o;
    const auto [it, inserted] = names.emplace(run.name, described);
    if (!inserted)
      throw InputError("command line (--vary)", "",
                       "runs '" + it->second + "' and '" + described + "' would share the folder " + run.name,
                       "values that differ only in characters other than letters, digits and ._+- cannot share a sweep");
    plan.runs.push_back(std::move(run));
    for (size_t k = varied.size(); k-- > 0;) {
      if (++index[k] < varied[k].values.size()) break;
      index[k] = 0;
    }
  }
  return plan;
}

nlohmann::json SweepPlan::manifest() const {
  nlohmann::json m;
  m["format"] = "dtsim-sweep-1";
  m["scenario"] = scenario;
  // Where the file is, whatever folder the sweep was started from, and its bytes: a rerun from elsewhere is the
  // same sweep, and one whose file changed since is not (its finished runs were made from the old file).
  std::error_code ec;
  const fs::path absolute = fs::absolute(scenario, ec);
  m["scenario_absolute"] = ec ? scenario : absolute.lexically_normal().string();
  m["scenario_crc32"] = file_crc32(scenario);
  m["sets"] = sets;
  nlohmann::json vary = nlohmann::json::array();
  for (const VariedKey& v : varied) vary.push_back({{"key", v.key}, {"values", v.values}, {"flag", v.flag}});
  m["vary"] = vary;
  nlohmann::json list = nlohmann::json::array();
  for (const SweepRun& run : runs) list.push_back(run.name);
  m["runs"] = list;
  return m;
}

SweepPlan SweepPlan::from_manifest(const nlohmann::json& m, const std::string& where) {
  try {
    if (!m.is_object() || m.value("format", "") != "dtsim-sweep-1")
      throw InputError(where, "", "not a dtsim sweep manifest", "run 'dtsim sweep' to create one");
    std::vector<VariedKey> varied;
    for (const auto& v : m.at("vary"))
      varied.push_back({v.at("key").get<std::string>(), v.at("values").get<std::vector<std::string>>(),
                        v.at("flag").get<std::string>()});
    return make_sweep_plan(m.at("scenario").get<std::string>(), m.at("sets").get<std::vector<std::string>>(), varied);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where, "", std::string("a damaged sweep manifest (") + e.what() + ")",
                     "rerun the 'dtsim sweep' command that made it");
  }
}

}  // namespace dtsim::sim
