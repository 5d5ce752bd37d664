// Names, settings validation, tensor layouts and the per-step statistics of gradient compression.
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "models/compression/codec.hpp"
#include "models/compression/compression.hpp"
#include "models/compression/registry.hpp"

namespace dtsim::models {
namespace {

[[noreturn]] void reject(const std::string& what) { throw std::invalid_argument("compression: " + what); }
// "compression: <setting> <reason>".
[[noreturn]] void reject_setting(CompressionSetting setting, const std::string& reason) {
  const std::string name = to_string(setting);
  throw CompressionSettingError(name, "compression: " + name + " " + reason);
}

// Refuses `setting`, set to a value that has an effect, for a kind that does not read it: "applies to sign and
// signum, not topk", the kinds from the registry.
void reject_unless_read(const CompressorDescriptor& compressor, CompressionSetting setting, bool set) {
  if (!set || compressor.reads(setting)) return;
  std::vector<std::string> readers;
  for (const CompressorKind k : compressors_reading(setting)) readers.push_back(to_string(k));
  reject_setting(setting, "applies to " + join_names(readers, ", ", " and ") + ", not " + compressor.name);
}

std::string show(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

CompressorKind parse_compressor_kind(const std::string& text) {
  if (const auto kind = compressor_kind_table().parse(text)) return *kind;
  reject("unknown compressor '" + text + "' (expected " + compressor_kind_table().or_list() + ")");
}

const char* to_string(CompressorKind kind) { return compressor_kind_table().name(kind); }

IndexEncoding parse_index_encoding(const std::string& text) {
  if (const auto encoding = index_encoding_table().parse(text)) return *encoding;
  reject("unknown index encoding '" + text + "' (expected " + index_encoding_table().or_list() + ")");
}

const char* to_string(IndexEncoding encoding) { return index_encoding_table().name(encoding); }

SignOfZero parse_sign_of_zero(const std::string& text) {
  if (const auto sign = sign_of_zero_table().parse(text)) return *sign;
  reject("unknown sign of zero '" + text + "' (expected " + sign_of_zero_table().or_list() + ")");
}

const char* to_string(SignOfZero sign) { return sign_of_zero_table().name(sign); }

const char* to_string(Collective collective) { return collective_table().name(collective); }

void validate(const CompressionSettings& s) {
  using S = CompressionSetting;
  // Comparisons are written so that NaN fails them.
  if (!(s.ratio > 0.0 && s.ratio <= 1.0)) reject_setting(S::Ratio, "must be in (0, 1], got " + show(s.ratio));
  if (s.qsgd_levels < 1 || s.qsgd_levels > (1 << 24))
    reject_setting(S::QsgdLevels, "must be in [1, 2^24], got " + std::to_string(s.qsgd_levels));
  if (s.powersgd_rank < 1)
    reject_setting(S::PowerSgdRank, "must be at least 1, got " + std::to_string(s.powersgd_rank));
  if (!(s.signum_momentum >= 0.0 && s.signum_momentum < 1.0))
    reject_setting(S::SignumMomentum, "must be in [0, 1), got " + show(s.signum_momentum));
  if (s.start_step < 0) reject_setting(S::StartStep, "must be at least 0, got " + std::to_string(s.start_step));
  // Options switched on for a compressor that does not read them.
  const CompressorDescriptor& compressor = compressor_descriptor(s.kind);
  reject_unless_read(compressor, S::MajorityVote, s.majority_vote);
  reject_unless_read(compressor, S::SignOfZero, s.sign_of_zero != SignOfZero::Plus);
  reject_unless_read(compressor, S::Predivide, s.predivide);
  reject_unless_read(compressor, S::SampledThreshold, s.sampled_threshold);
  reject_unless_read(compressor, S::Unbiased, s.unbiased);
  if (!(s.momentum_correction >= 0.0 && s.momentum_correction < 1.0))
    reject_setting(S::MomentumCorrection, "must be in [0, 1), got " + show(s.momentum_correction));
  reject_unless_read(compressor, S::MomentumCorrection, s.momentum_correction > 0.0);
  if (s.momentum_correction > 0.0 && !s.error_feedback)
    reject_setting(S::MomentumCorrection, "needs error_feedback (the residual is DGC's accumulated velocity)");
}

std::vector<TensorLayout> vector_layouts(const std::vector<ParamTensor>& tensors) {
  std::vector<TensorLayout> layouts;
  for (const ParamTensor& t : tensors) layouts.push_back({t, 0, 0});
  return layouts;
}

template <class T>
std::vector<TensorLayout> tensor_layouts(const Network<T>& network) {
  std::vector<TensorLayout> layouts = vector_layouts(network.param_tensors());
  for (TensorLayout& l : layouts) {
    if (l.tensor.is_bias || l.tensor.size == 0) continue;
    // The layer that owns the tensor: the last one that starts at or before it.
    size_t owner = 0;
    for (size_t i = 0; i < network.num_layers(); ++i)
      if (network.layer(i).param_count() > 0 && network.layer_param_offset(i) <= l.tensor.offset) owner = i;
    const size_t rows = network.layer(owner).weight_rows();
    if (rows == 0 || l.tensor.size % rows != 0) continue;  // no known matrix shape: a vector
    l.rows = rows;
    l.cols = l.tensor.size / rows;
  }
  return layouts;
}

template std::vector<TensorLayout> tensor_layouts(const Network<float>&);
template std::vector<TensorLayout> tensor_layouts(const Network<double>&);

double CompressionStats::relative_error() const {
  return input_sum_squares > 0.0 ? std::sqrt(error_sum_squares / input_sum_squares) : 0.0;
}

double CompressionStats::compression_ratio() const {
  return wire_bytes > 0 ? static_cast<double>(dense_bytes) / static_cast<double>(wire_bytes) : 0.0;
}

namespace compression_detail {

uint64_t kept_count(double ratio, size_t d) {
  const double k = std::round(ratio * static_cast<double>(d));
  if (k < 1.0) return d > 0 ? 1 : 0;
  return std::min<uint64_t>(static_cast<uint64_t>(k), d);
}

}  // namespace compression_detail
}  // namespace dtsim::models
