// The list of compressors, and the name tables of compression's enums.
#include "models/compression/registry.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/compression/codec.hpp"

namespace dtsim::models {

const std::vector<CompressorDescriptor>& compressor_registry() {
  using namespace compression_detail;
  // One line per compressor, in CompressorKind order.
  static const std::vector<CompressorDescriptor> registry = {
      describe_none(), describe_fp16(), describe_bf16(),       describe_topk(),   describe_randomk(),
      describe_qsgd(), describe_sign(), describe_scaled_sign(), describe_signum(), describe_powersgd(),
  };
  return registry;
}

const NameTable<CompressorKind>& compressor_kind_table() {
  static const NameTable<CompressorKind> table = [] {
    std::vector<NameTable<CompressorKind>::Entry> entries;
    for (const CompressorDescriptor& d : compressor_registry()) entries.push_back({d.kind, d.name});
    return NameTable<CompressorKind>(std::move(entries));
  }();
  return table;
}

std::vector<std::string> compressor_kind_names() { return compressor_kind_table().names(); }

const CompressorDescriptor& compressor_descriptor(CompressorKind kind) {
  for (const CompressorDescriptor& d : compressor_registry())
    if (d.kind == kind) return d;
  throw std::invalid_argument("compression: unknown compressor kind");
}

bool CompressorDescriptor::reads(CompressionSetting setting) const {
  return std::find(settings.begin(), settings.end(), setting) != settings.end();
}

std::vector<CompressorKind> compressors_reading(CompressionSetting setting) {
  std::vector<CompressorKind> kinds;
  for (const CompressorDescriptor& d : compressor_registry())
    if (d.reads(setting)) kinds.push_back(d.kind);
  return kinds;
}

const NameTable<CompressorFamily>& compressor_family_table() {
  static const NameTable<CompressorFamily> table{{CompressorFamily::None, "none"},
                                                 {CompressorFamily::Cast, "cast"},
                                                 {CompressorFamily::Sparsification, "sparsification"},
                                                 {CompressorFamily::Quantisation, "quantisation"},
                                                 {CompressorFamily::Sign, "sign"},
                                                 {CompressorFamily::LowRank, "low-rank"}};
  return table;
}

const char* to_string(CompressorFamily family) { return compressor_family_table().name(family); }

const NameTable<CompressionSetting>& compression_setting_table() {
  using S = CompressionSetting;
  static const NameTable<CompressionSetting> table{{S::Ratio, "ratio"},
                                                   {S::SampledThreshold, "sampled_threshold"},
                                                   {S::Unbiased, "unbiased"},
                                                   {S::SharedIndices, "shared_indices"},
                                                   {S::QsgdLevels, "qsgd_levels"},
                                                   {S::QsgdBucket, "qsgd_bucket"},
                                                   {S::PowerSgdRank, "powersgd_rank"},
                                                   {S::SignumMomentum, "signum_momentum"},
                                                   {S::MajorityVote, "majority_vote"},
                                                   {S::SignOfZero, "sign_of_zero"},
                                                   {S::Predivide, "predivide"},
                                                   {S::ErrorFeedback, "error_feedback"},
                                                   {S::MomentumCorrection, "momentum_correction"},
                                                   {S::StartStep, "start_step"},
                                                   {S::MinTensorSize, "min_tensor_size"},
                                                   {S::Indices, "indices"},
                                                   {S::Seed, "seed"}};
  return table;
}

const char* to_string(CompressionSetting setting) { return compression_setting_table().name(setting); }
std::vector<std::string> compression_setting_names() { return compression_setting_table().names(); }

const NameTable<IndexEncoding>& index_encoding_table() {
  static const NameTable<IndexEncoding> table{{IndexEncoding::Bits, "bits"}, {IndexEncoding::Int32, "int32"}};
  return table;
}

std::vector<std::string> index_encoding_names() { return index_encoding_table().names(); }

const NameTable<SignOfZero>& sign_of_zero_table() {
  static const NameTable<SignOfZero> table{{SignOfZero::Plus, "plus"}, {SignOfZero::Zero, "zero"}};
  return table;
}

std::vector<std::string> sign_of_zero_names() { return sign_of_zero_table().names(); }

const NameTable<Collective>& collective_table() {
  static const NameTable<Collective> table{{Collective::Allreduce, "allreduce"}, {Collective::AllGather, "allgather"}};
  return table;
}

std::vector<std::string> collective_names() { return collective_table().names(); }

namespace compression_detail {

std::vector<CompressionSetting> compressed_settings(std::initializer_list<CompressionSetting> own) {
  // What the engine reads for every compressor that encodes anything.
  std::vector<CompressionSetting> settings(own);
  for (const CompressionSetting common :
       {CompressionSetting::ErrorFeedback, CompressionSetting::StartStep, CompressionSetting::MinTensorSize})
    if (std::find(settings.begin(), settings.end(), common) == settings.end()) settings.push_back(common);
  std::sort(settings.begin(), settings.end());
  return settings;
}

}  // namespace compression_detail
}  // namespace dtsim::models
