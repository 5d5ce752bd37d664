// What `dtsim sweep` runs: the Cartesian product of its --vary lists (--seeds N is a --vary of run.seed),
// one run folder per combination, named after its values, and the manifest (sweep.json) through which a rerun
// and `dtsim collect` know which folders belong to the sweep and what each one varied.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace dtsim::sim {

struct VariedKey {
  std::string key;                  // section.key
  std::vector<std::string> values;  // in the order given
  std::string flag;                 // the flag that set it ("--vary" or "--seeds"), for messages
};

struct SweepRun {
  std::string name;                                         // its folder under the sweep's --out
  std::vector<std::pair<std::string, std::string>> values;  // (key, value) for each varied key, in --vary order
  std::vector<std::string> overrides() const;               // "key=value", as --set takes them
  const std::string* value_of(const std::string& key) const;  // nullptr when the key is not varied
};

struct SweepPlan {
  std::string scenario;           // the scenario file as given
  std::vector<std::string> sets;  // --set overrides, the same for every run
  std::vector<VariedKey> varied;
  std::vector<SweepRun> runs;  // the first varied key changes slowest

  // The varied key `key`, or nullptr when it is not varied.
  const VariedKey* find_varied(const std::string& key) const;
  // The varied keys that group runs in summary.csv: all but run.seed.
  std::vector<std::string> group_keys() const;
  bool varies_seed() const;

  nlohmann::json manifest() const;
  // Reads a manifest written by manifest(); InputError at `where` when it is not one.
  static SweepPlan from_manifest(const nlohmann::json& manifest, const std::string& where);
};

// "section.key=v1,v2,...": InputError at --vary when it is not of that form (a value may not be empty; values
// are split at commas, so a value cannot hold one).
VariedKey parse_vary(const std::string& text);
// --seeds N: run.seed = 1, 2, ..., N.
VariedKey seeds_as_vary(long count);

// What a value means for its key: a number or quantity by its value (0.1 and 1e-1, 25GB/s and 200Gbps alike),
// anything else, or a value the key would refuse, by its text.
std::string value_meaning(const std::string& key, const std::string& value);
// A --set item "key=value" as its key and value_meaning (("training.max_steps", "600") for "…=6e2"); an item
// without '=' is its own key with an empty value.
std::pair<std::string, std::string> set_meaning(const std::string& item);

// The product of `varied`, each run named "key=value,key=value" with every byte outside [A-Za-z0-9._+-]
// written as '_'. InputError when a key is varied twice, a list repeats a value, two runs would share a
// folder name, or the product has more than `max_runs` runs.
SweepPlan make_sweep_plan(const std::string& scenario, const std::vector<std::string>& sets,
                          const std::vector<VariedKey>& varied, size_t max_runs = 100000);

}  // namespace dtsim::sim
