// Keys that take effect, but not as their user likely meant: a warning line each (`dtsim run`, `check` and
// `sweep`), never an error, --strict or not (--strict is about keys without effect, ignored_keys.hpp).
#pragma once

#include <vector>

#include "sim/config/ignored_keys.hpp"
#include "sim/config/run_config.hpp"
#include "sim/scenario/key_origins.hpp"

namespace dtsim::sim {

// The warnings of `config`, each at the key the user set (IgnoredKey's key, reason and place), in a fixed order.
std::vector<IgnoredKey> find_key_warnings(const RunConfig& config, const KeyOrigins& origins);

}  // namespace dtsim::sim
