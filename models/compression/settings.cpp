// Names, settings validation, tensor layouts and the per-step statistics of gradient compression.
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "models/compression/codec.hpp"
#include "models/compression/compression.hpp"
#include "models/conv_layers.hpp"

namespace dtsim::models {
namespace {

[[noreturn]] void reject(const std::string& what) { throw std::invalid_argument("compression: " + what); }
// "compression: <setting> <reason>".
[[noreturn]] void reject_setting(const std::string& setting, const std::string& reason) {
  throw CompressionSettingError(setting, "compression: " + setting + " " + reason);
}

std::string show(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

bool is_cast(CompressorKind k) { return k == CompressorKind::Fp16 || k == CompressorKind::Bf16; }

}  // namespace

CompressorKind parse_compressor_kind(const std::string& text) {
  static const std::pair<const char*, CompressorKind> names[] = {
      {"none", CompressorKind::None},         {"fp16", CompressorKind::Fp16},
      {"bf16", CompressorKind::Bf16},         {"topk", CompressorKind::TopK},
      {"randomk", CompressorKind::RandomK},   {"qsgd", CompressorKind::Qsgd},
      {"sign", CompressorKind::Sign},         {"scaled-sign", CompressorKind::ScaledSign},
      {"signum", CompressorKind::Signum},     {"powersgd", CompressorKind::PowerSgd}};
  for (const auto& [name, kind] : names)
    if (text == name) return kind;
  reject("unknown compressor '" + text +
         "' (expected none, fp16, bf16, topk, randomk, qsgd, sign, scaled-sign, signum or powersgd)");
}

const char* to_string(CompressorKind kind) {
  switch (kind) {
    case CompressorKind::None: return "none";
    case CompressorKind::Fp16: return "fp16";
    case CompressorKind::Bf16: return "bf16";
    case CompressorKind::TopK: return "topk";
    case CompressorKind::RandomK: return "randomk";
    case CompressorKind::Qsgd: return "qsgd";
    case CompressorKind::Sign: return "sign";
    case CompressorKind::ScaledSign: return "scaled-sign";
    case CompressorKind::Signum: return "signum";
    case CompressorKind::PowerSgd: return "powersgd";
  }
  return "?";
}

IndexEncoding parse_index_encoding(const std::string& text) {
  if (text == "bits") return IndexEncoding::Bits;
  if (text == "int32") return IndexEncoding::Int32;
  reject("unknown index encoding '" + text + "' (expected bits or int32)");
}

const char* to_string(IndexEncoding encoding) { return encoding == IndexEncoding::Bits ? "bits" : "int32"; }

const char* to_string(Collective collective) {
  return collective == Collective::Allreduce ? "allreduce" : "allgather";
}

void validate(const CompressionSettings& s) {
  // Comparisons are written so that NaN fails them.
  if (!(s.ratio > 0.0 && s.ratio <= 1.0)) reject_setting("ratio", "must be in (0, 1], got " + show(s.ratio));
  if (s.qsgd_levels < 1 || s.qsgd_levels > (1 << 24))
    reject_setting("qsgd_levels", "must be in [1, 2^24], got " + std::to_string(s.qsgd_levels));
  if (s.powersgd_rank < 1) reject_setting("powersgd_rank", "must be at least 1, got " + std::to_string(s.powersgd_rank));
  if (!(s.signum_momentum >= 0.0 && s.signum_momentum < 1.0))
    reject_setting("signum_momentum", "must be in [0, 1), got " + show(s.signum_momentum));
  if (s.start_step < 0) reject_setting("start_step", "must be at least 0, got " + std::to_string(s.start_step));
  const std::string kind = to_string(s.kind);
  if (s.majority_vote && s.kind != CompressorKind::Sign && s.kind != CompressorKind::Signum)
    reject_setting("majority_vote", "applies to sign and signum, not " + kind);
  if (s.predivide && !is_cast(s.kind)) reject_setting("predivide", "applies to fp16 and bf16, not " + kind);
  if (s.sampled_threshold && s.kind != CompressorKind::TopK) reject_setting("sampled_threshold", "applies to topk, not " + kind);
  if (s.unbiased && s.kind != CompressorKind::RandomK) reject_setting("unbiased", "applies to randomk, not " + kind);
  if (!(s.momentum_correction >= 0.0 && s.momentum_correction < 1.0))
    reject_setting("momentum_correction", "must be in [0, 1), got " + show(s.momentum_correction));
  if (s.momentum_correction > 0.0 && s.kind != CompressorKind::TopK && s.kind != CompressorKind::RandomK)
    reject_setting("momentum_correction", "applies to topk and randomk, not " + kind);
  if (s.momentum_correction > 0.0 && !s.error_feedback)
    reject_setting("momentum_correction", "needs error_feedback (the residual is DGC's accumulated velocity)");
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
    const Layer<T>& layer = network.layer(owner);
    const std::string kind = layer.kind();
    size_t rows = 0;
    if (kind == "dense") {
      rows = static_cast<size_t>(layer.input_size());
    } else if (kind == "conv") {
      rows = static_cast<size_t>(dynamic_cast<const Conv2d<T>&>(layer).output_shape().channels);
    } else if (kind == "embedding") {
      const size_t dim = static_cast<size_t>(layer.output_size() / layer.input_size());
      rows = l.tensor.size / dim;  // vocab
    }
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
