// Keys a user set that have no effect in this run: a [ps] key under synchronous training, a top-k ratio with
// sign compression, hidden widths for logistic regression, ... Each is reported with its reason; `dtsim run`
// and `dtsim check` print one warning line each, summary.json lists them, and --strict makes them errors.
//
// Applicability comes from the registries (which sections a strategy reads, which settings a compressor or
// a federated algorithm reads) and, for the numerics, from the config module's own table of which choice
// reads which key (ignored_keys.cpp); no list of "ignored keys" is kept by hand.
#pragma once

#include <string>
#include <vector>

#include "sim/config/run_config.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/scenario/key_origins.hpp"

namespace dtsim::sim {

struct IgnoredKey {
  std::string key;
  std::string reason;  // e.g. "has no effect with training.strategy = sync (only async-ps reads [ps])"
  Origin where;        // the file line or the command line that set it
  std::string describe() const;  // "<where>: <key>: <reason>"
};

// The keys the scenario file or --set gave (defaults and profile values are never reported) that `config`
// does not read, in schema order.
std::vector<IgnoredKey> find_ignored_keys(const RunConfig& config, const KeyOrigins& origins);

// Why `key` has no effect with `config`, or "" when it has one (the rule find_ignored_keys applies).
std::string why_ignored(const std::string& key, const RunConfig& config);
// The same for `dtsim collective`, which times one collective of `kind` (a training run calls allreduce,
// all-gather and reduce-scatter only).
std::string why_ignored_by_collective(const std::string& key, const RunConfig& config, CollectiveKind kind);

// ZeRO at `zero_stage` over `data_parallel_gpus` replicas: "" when it shards something, else why not, as a
// reason ("has no effect on one GPU: ..."). The one rule behind sync.zero_stage's report and `dtsim workload`'s
// warning for --zero with --gpus 1.
std::string zero_sharding_without_effect(int zero_stage, int data_parallel_gpus);

}  // namespace dtsim::sim
