// The compressors dtsim knows, one descriptor each: its name (the one place CompressorKind's names are
// written), its family, the CompressionSettings fields it reads, and how its codec is made. Everything that
// depends on which compressor is chosen (parse_compressor_kind, to_string, validate()'s "applies to …" rules,
// the engine's codec) is derived from this list.
//
// Adding a compressor: a CompressorKind value, one codec file that defines its describe_…() (see codec.hpp),
// and one line in compressor_registry() (registry.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/ops.hpp"
#include "models/compression/compression.hpp"
#include "models/name_table.hpp"

namespace dtsim::models {

// What kind of transformation a compressor applies.
enum class CompressorFamily { None, Cast, Sparsification, Quantisation, Sign, LowRank };
const NameTable<CompressorFamily>& compressor_family_table();  // "none", "cast", "sparsification",
                                                                // "quantisation", "sign", "low-rank"
const char* to_string(CompressorFamily family);

// The fields of CompressionSettings, named as the fields are (and as CompressionSettingError::setting() names
// them), in the struct's order. `kind` is not one: it chooses the descriptor.
enum class CompressionSetting {
  Ratio,
  SampledThreshold,
  Unbiased,
  SharedIndices,
  QsgdLevels,
  QsgdBucket,
  PowerSgdRank,
  SignumMomentum,
  MajorityVote,
  SignOfZero,
  Predivide,
  ErrorFeedback,
  MomentumCorrection,
  StartStep,
  MinTensorSize,
  Indices,
  Seed,
};
const NameTable<CompressionSetting>& compression_setting_table();
const char* to_string(CompressionSetting setting);  // "ratio", …, "powersgd_rank", …, "seed"
std::vector<std::string> compression_setting_names();

namespace compression_detail {
template <class T>
class Codec;
}

// Makes the codec of a compressor for one engine (internal to models/compression: Codec is in codec.hpp).
template <class T>
using CodecFactory = std::unique_ptr<compression_detail::Codec<T>> (*)(gpu::Ops<T>&, const std::vector<TensorLayout>&,
                                                                       const CompressionSettings&);

struct CompressorDescriptor {
  CompressorKind kind;
  const char* name;  // as parse_compressor_kind accepts it
  CompressorFamily family;
  // Every CompressionSettings field that can change what this compressor does, in CompressionSetting order.
  // A field not listed has no effect with this kind (validate() refuses some of those when they are set:
  // majority_vote, sign_of_zero, predivide, sampled_threshold, unbiased, momentum_correction). "none" reads nothing.
  // `seed` is listed where the compressor draws random numbers; it is derived, not chosen by a user.
  std::vector<CompressionSetting> settings;
  CodecFactory<float> make_float;
  CodecFactory<double> make_double;

  bool reads(CompressionSetting setting) const;
  template <class T>
  CodecFactory<T> factory() const;
};

template <>
inline CodecFactory<float> CompressorDescriptor::factory<float>() const { return make_float; }
template <>
inline CodecFactory<double> CompressorDescriptor::factory<double>() const { return make_double; }

// Every compressor, one descriptor per CompressorKind, in CompressorKind order (the order of the choices).
const std::vector<CompressorDescriptor>& compressor_registry();
// The descriptor of `kind`; throws std::invalid_argument for a value outside the enum.
const CompressorDescriptor& compressor_descriptor(CompressorKind kind);
// The compressors that read `setting`, in registry order.
std::vector<CompressorKind> compressors_reading(CompressionSetting setting);

// The one table of CompressorKind's names (built from the registry), and the choices list.
const NameTable<CompressorKind>& compressor_kind_table();
std::vector<std::string> compressor_kind_names();  // none, fp16, bf16, topk, randomk, qsgd, sign, …

const NameTable<IndexEncoding>& index_encoding_table();
std::vector<std::string> index_encoding_names();  // bits, int32

const NameTable<SignOfZero>& sign_of_zero_table();
std::vector<std::string> sign_of_zero_names();  // plus, zero

const NameTable<Collective>& collective_table();
std::vector<std::string> collective_names();  // allreduce, allgather

}  // namespace dtsim::models
