// Gradient compression as a scenario sets it: the compressor's settings (models/compression) and what only
// the simulator knows how to resolve (a start given in epochs, whether federated downloads are compressed).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "models/compression/compression.hpp"
#include "models/compression/registry.hpp"

namespace dtsim::sim {

class Scenario;
struct RunConfig;

struct CompressionConfig {
  models::CompressionSettings settings;  // start_step as given; seed from the run's seed
  int64_t start_epoch = 0;               // federated: rounds
  bool downloads = false;                // federated: the model download is compressed too

  bool active() const { return settings.kind != models::CompressorKind::None; }
  // The settings a run uses: start_step raised to start_epoch × steps_per_epoch (rounds for federated).
  models::CompressionSettings resolved(int64_t steps_per_epoch) const;
};

// Reads the [compression] keys; the compressors' random streams derive from `run_seed` (run.seed). A setting
// given for a compressor it does not apply to is an InputError at the key; compression with strategies or
// features it cannot serve is refused with the other cross-section rules (run_checks.hpp).
CompressionConfig make_compression_config(const Scenario& scenario, uint64_t run_seed);

// Between the compression.* keys and the models' CompressionSetting names, which agree except for
// compression.rank (powersgd_rank) and compression.start_epoch (converted into start_step).
// The setting a key sets, or nullopt for keys that set none (kind, downloads).
std::optional<models::CompressionSetting> compression_setting_of_key(const std::string& key);
// The key a user changes for a setting that models::validate() refused ("powersgd_rank" → "compression.rank").
std::string compression_key_of_setting(const std::string& setting);

}  // namespace dtsim::sim
