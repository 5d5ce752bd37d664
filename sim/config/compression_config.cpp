#include "sim/config/compression_config.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/random.hpp"
#include "sim/config/schema.hpp"
#include "sim/config/strategy.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

models::CompressionSettings CompressionConfig::resolved(int64_t steps_per_epoch) const {
  models::CompressionSettings s = settings;
  s.start_step = std::max(s.start_step, start_epoch * steps_per_epoch);
  return s;
}

namespace {

// The key fields whose setting has another name: {field, setting}.
const std::pair<const char*, const char*> kRenamedFields[] = {{"rank", "powersgd_rank"}, {"start_epoch", "start_step"}};

}  // namespace

std::optional<models::CompressionSetting> compression_setting_of_key(const std::string& key) {
  std::string field = key.substr(key.find('.') + 1);
  for (const auto& [renamed, setting] : kRenamedFields)
    if (field == renamed) field = setting;
  return models::compression_setting_table().parse(field);
}

std::string compression_key_of_setting(const std::string& setting) {
  // A setting with a key of its own (start_step has one) is set there; the others through their renamed field.
  const std::string own = "compression." + setting;
  if (find_key(own)) return own;
  for (const auto& [renamed, name] : kRenamedFields)
    if (setting == name) return std::string("compression.") + renamed;
  return own;
}

CompressionConfig make_compression_config(const Scenario& s) {
  CompressionConfig c;
  models::CompressionSettings& m = c.settings;
  m.kind = models::parse_compressor_kind(s.text("compression.kind"));  // a choice key: always valid
  m.ratio = s.real("compression.ratio");
  m.sampled_threshold = s.boolean("compression.sampled_threshold");
  m.unbiased = s.boolean("compression.unbiased");
  m.shared_indices = s.boolean("compression.shared_indices");
  m.qsgd_levels = static_cast<int>(s.integer("compression.qsgd_levels"));
  m.qsgd_bucket = static_cast<size_t>(s.integer("compression.qsgd_bucket"));
  m.powersgd_rank = static_cast<int>(s.integer("compression.rank"));
  m.signum_momentum = s.real("compression.signum_momentum");
  m.majority_vote = s.boolean("compression.majority_vote");
  m.predivide = s.boolean("compression.predivide");
  m.error_feedback = s.boolean("compression.error_feedback");
  m.momentum_correction = s.real("compression.momentum_correction");
  m.start_step = s.integer("compression.start_step");
  m.min_tensor_size = static_cast<size_t>(s.integer("compression.min_tensor_size"));
  m.indices = models::parse_index_encoding(s.text("compression.indices"));
  m.seed = models::derive_seed(static_cast<uint64_t>(s.integer("run.seed")), "compression");
  c.start_epoch = s.integer("compression.start_epoch");
  c.downloads = s.boolean("compression.downloads");

  if (m.momentum_correction > 0.0 && s.real("training.momentum") != 0.0)
    s.fail("compression.momentum_correction",
           "the momentum is applied by each worker before sparsifying; the optimizer's would apply it twice",
           "set training.momentum = 0 (and give its value to compression.momentum_correction)");
  const Strategy strategy = parse_strategy(s.text("training.strategy"));
  if (c.downloads && !reads_section(strategy, "fl"))
    s.fail("compression.downloads", "applies to training.strategy = federated, not " + s.text("training.strategy"),
           "remove it, or set training.strategy = federated");
  if (!c.active() && m.error_feedback)
    s.fail("compression.error_feedback", "error feedback needs a compressor (compression.kind is none)",
           "set compression.kind, e.g. topk");
  if (!c.active() && c.downloads)
    s.fail("compression.downloads", "compressed downloads need a compressor (compression.kind is none)",
           "set compression.kind, e.g. topk");
  // The settings' own rules (ranges, options that belong to other compressors), at the key that set them.
  try {
    models::validate(m);
  } catch (const models::CompressionSettingError& e) {
    const std::string key = compression_key_of_setting(e.setting());
    const std::string reason = e.what();
    const std::string prefix = "compression: ";
    s.fail(key, reason.compare(0, prefix.size(), prefix) == 0 ? reason.substr(prefix.size()) : reason,
           "'dtsim keys' says which compression.kind each compression key applies to");
  }
  if (!c.active()) return c;

  // The asynchronous parameter server and federated learning decode every worker's message on its own (a
  // shard applies each push, the aggregator weighs each upload): there is no group step in which a vote could
  // be taken or a narrow-format sum could overflow, so these two settings would be silently ignored.
  const StrategyDescriptor& traits = strategy_descriptor(strategy);
  if (!traits.synchronous_group) {
    if (m.majority_vote)
      s.fail("compression.majority_vote",
             std::string("a majority vote needs a synchronous group; ") + traits.name + " decodes each worker's signs on their own",
             "remove it (each message is then plain signs), or use training.strategy = sync");
    if (m.predivide)
      s.fail("compression.predivide",
             std::string("predivide scales a synchronous group's narrow-format sum; ") + traits.name + " has no such sum",
             "remove it, or use training.strategy = sync");
  }
  // Secure aggregation masks each upload with pairwise masks that cancel only in the sum of dense vectors of
  // one fixed length; compressed messages (sparse values at client-chosen indices, low-rank factors, signs
  // with a scale) are neither, and revealing which indices a client sends defeats the masking.
  if (reads_section(strategy, "fl") && s.boolean("fl.secure_aggregation"))
    s.fail("compression.kind", "compressed uploads cannot be securely aggregated (the masks need dense vectors)",
           "set compression.kind = none, or fl.secure_aggregation = false");

  // Synchronous groups compress the gradients as backward leaves them: a loss-scaled one would carry the
  // scale (which changes as the scaler grows or backs off) into the residuals, and an overflowed step's
  // infinities would stay in them for good. (The parameter server unscales before compressing.)
  const bool synchronous = traits.synchronous_group;
  if (synchronous && s.text("precision.loss_scaling") != "none")
    s.fail("precision.loss_scaling", "loss scaling cannot be combined with gradient compression yet",
           "use precision.weights = bf16 (which needs no loss scaling), or compression.kind = none");

  // A restart rolls the model back to a checkpoint, which holds no residuals or half-combined steps.
  if (synchronous && !s.text("faults.events").empty())
    s.fail("compression.kind", "synchronous training with compression does not survive [faults] events yet",
           "remove faults.events, or set compression.kind = none");
  return c;
}

}  // namespace dtsim::sim
