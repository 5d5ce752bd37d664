#include "sim/config/compression_config.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/compression/registry.hpp"
#include "models/random.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/key_builders.hpp"
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

CompressionConfig make_compression_config(const Scenario& s, uint64_t run_seed) {
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
  m.sign_of_zero = models::parse_sign_of_zero(s.text("compression.sign_of_zero"));  // a choice key: always valid
  m.predivide = s.boolean("compression.predivide");
  m.error_feedback = s.boolean("compression.error_feedback");
  m.momentum_correction = s.real("compression.momentum_correction");
  m.start_step = s.integer("compression.start_step");
  m.min_tensor_size = static_cast<size_t>(s.integer("compression.min_tensor_size"));
  m.indices = models::parse_index_encoding(s.text("compression.indices"));
  m.seed = models::derive_seed(run_seed, "compression");
  c.start_epoch = s.integer("compression.start_epoch");
  c.downloads = s.boolean("compression.downloads");

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
  return c;
}

// ---- keys ------------------------------------------------------------------------------------------------
// Scenario keys: gradient compression (models/compression), for every strategy.
using namespace key_builders;

void add_compression_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      choice("compression.kind", "none", models::compressor_kind_names(),
             "What a worker sends instead of its fp32 gradient (sync: the bucket allreduces; async-ps: each push; "
             "federated: each upload); the bytes of the actual encoding drive the simulated network"),
      real("compression.ratio", "0.01", fraction_open_closed(),
           "topk, randomk: fraction k/d of each tensor's values sent (k = max(1, round(ratio*d)))"),
      boolean("compression.sampled_threshold", "false",
              "topk: Deep Gradient Compression's threshold estimated from a sample instead of an exact selection "
              "(the message size then varies per worker; the all-gather pads to the largest)"),
      boolean("compression.unbiased", "false", "randomk: scale the kept values by d/k, so that E[C(g)] = g"),
      boolean("compression.shared_indices", "true",
              "randomk: every worker draws the same indices from a shared seed, so none are sent and the values "
              "can be allreduced; false = own indices, all-gathered like topk"),
      integer("compression.qsgd_levels", "7", between(1, 16777216),
              "qsgd: s magnitude levels; a value costs a sign bit and ceil(log2(s+1)) bits (7 = 4 bits per value)"),
      integer("compression.qsgd_bucket", "0", at_least(0), "qsgd: values per norm; 0 = one norm per tensor"),
      integer("compression.rank", "1", between(1, 1e6),
              "powersgd: rank r of the P (m x r) and Q (n x r) factors of each weight matrix (biases go uncompressed)"),
      real("compression.signum_momentum", "0.9", fraction_closed_open(),
           "signum: beta of the momentum m = beta*m + (1-beta)*g whose sign is sent"),
      boolean("compression.majority_vote", "false",
              "sign, signum, training.strategy = sync or local: the update is the sign of the sum of the workers' signs "
              "(signSGD with majority vote)"),
      choice("compression.sign_of_zero", "plus", models::sign_of_zero_names(),
             "sign, scaled-sign, signum: what a value that is exactly 0 is sent as: plus = +1, as a packed bit "
             "(x >= 0) carries it; zero = 0, the papers' sign(0) (torch.sign), still charged one bit"),
      boolean("compression.predivide", "false",
              "fp16, bf16, training.strategy = sync or local: divide by the number of workers before the narrow-format "
              "sum, so that it cannot overflow"),
      boolean("compression.error_feedback", "false",
              "Each worker keeps what compression dropped and adds it to its next gradient (EF-SGD)"),
      real("compression.momentum_correction", "0", fraction_closed_open(),
           "topk, randomk with error_feedback: Deep Gradient Compression's momentum correction with momentum "
           "factor masking, beta (0 = off); each worker applies the momentum before sparsifying, so "
           "training.momentum must be 0"),
      integer("compression.start_step", "0", at_least(0),
              "Steps before this one go uncompressed (PowerSGD's start_powerSGD_iter, 1-bit Adam's freeze_step)"),
      integer("compression.start_epoch", "0", at_least(0),
              "Like start_step, in epochs (the later of the two wins); federated: in rounds"),
      integer("compression.min_tensor_size", "0", at_least(0),
              "Layer filter: tensors with fewer values (biases, small layers) go uncompressed"),
      choice("compression.indices", "bits", models::index_encoding_names(),
             "Sparse messages' index encoding: ceil(log2 d) bits per index, or a 4-byte int32 each"),
      boolean("compression.downloads", "false",
              "federated: compress the server's model download to each client too (no error feedback there)"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
