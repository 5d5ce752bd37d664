#include "sim/config/partition_file.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <nlohmann/json.hpp>

#include "models/json_errors.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/scenario/ini_file.hpp"

namespace dtsim::sim {
namespace {

constexpr const char* kKey = "data.partition_file";
constexpr const char* kShape = "write {\"shards\": [[indices of worker 0], [indices of worker 1], ...]}";

// `line` 0 names the file alone (the JSON parsed; what is wrong is its shape, not one line).
[[noreturn]] void refuse(const std::string& path, int line, const std::string& reason, const std::string& hint = kShape) {
  throw InputError(Origin::at(path, line), kKey, reason, hint);
}

// 1-based line of byte offset `byte` (nlohmann counts the bytes read, the failing one included).
int line_of(const std::string& text, size_t byte) {
  const size_t end = std::min(text.size(), byte > 0 ? byte - 1 : 0);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
}

}  // namespace

std::vector<std::vector<int32_t>> read_partition_file(const std::string& path) {
  // A shard list of a few million indices is tens of MiB, so the cap is well above a key file's.
  const std::string text = read_text_file(path, "partition file", TextFileLimits{kKey, std::uintmax_t(256) << 20});

  nlohmann::json doc;
  // A member given twice would be kept once, the last, without a word (other members are the file's notes,
  // e.g. analysis/flower_partition.py's source and seed, and are not read).
  std::string twice;
  try {
    doc = models::parse_json_noting_repeats(text, twice);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number beyond a double
    const auto* parse = dynamic_cast<const nlohmann::json::parse_error*>(&e);
    refuse(path, parse ? line_of(text, parse->byte) : 0, "not valid JSON (" + models::json_error_reason(e) + ")");
  }
  if (!twice.empty()) refuse(path, 0, "the member \"" + twice + "\" appears twice");
  if (!doc.is_object() || !doc.contains("shards")) refuse(path, 0, "no top-level \"shards\" member");
  const nlohmann::json& shards = doc["shards"];
  if (!shards.is_array() || shards.empty()) refuse(path, 0, "\"shards\" must be a non-empty array of arrays");

  std::vector<std::vector<int32_t>> out(shards.size());
  for (size_t k = 0; k < shards.size(); ++k) {
    if (!shards[k].is_array()) refuse(path, 0, "shard " + std::to_string(k) + " is not an array of sample indices");
    out[k].reserve(shards[k].size());
    for (const nlohmann::json& v : shards[k]) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > std::numeric_limits<int32_t>::max())
        refuse(path, 0, "shard " + std::to_string(k) + " holds " + v.dump() + ", not a sample index (an integer ≥ 0)");
      out[k].push_back(static_cast<int32_t>(v.get<int64_t>()));
    }
  }
  return out;
}

}  // namespace dtsim::sim
