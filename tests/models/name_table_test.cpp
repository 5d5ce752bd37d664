// NameTable, and the one table of every named enum in models/: every name round-trips, an unknown name is
// rejected (by the table and by the parse function, with the message it has always had), and names() keeps
// the table's order (the order a key lists its choices in).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "models/architectures.hpp"
#include "models/compression/registry.hpp"
#include "models/federated.hpp"
#include "models/loss_scaler.hpp"
#include "models/lr_schedule.hpp"
#include "models/mixed_precision.hpp"
#include "models/name_table.hpp"
#include "models/optimizer.hpp"
#include "models/staleness.hpp"

namespace dtsim::models {
namespace {

enum class Colour { Red, Green, Blue, Unnamed };

const NameTable<Colour>& colours() {
  static const NameTable<Colour> table{{Colour::Red, "red"}, {Colour::Green, "green"}, {Colour::Blue, "blue"}};
  return table;
}

TEST(NameTable, ParsesEveryNameAndNamesEveryValue) {
  for (const Colour c : {Colour::Red, Colour::Green, Colour::Blue}) {
    ASSERT_TRUE(colours().parse(colours().name(c)).has_value());
    EXPECT_EQ(*colours().parse(colours().name(c)), c);
    EXPECT_TRUE(colours().contains(c));
  }
  EXPECT_STREQ(colours().name(Colour::Green), "green");
  EXPECT_EQ(colours().size(), 3u);
}

TEST(NameTable, RejectsUnknownNamesExactly) {
  EXPECT_FALSE(colours().parse("purple").has_value());
  EXPECT_FALSE(colours().parse("Red").has_value());  // case matters
  EXPECT_FALSE(colours().parse("red ").has_value());
  EXPECT_FALSE(colours().parse("").has_value());
  EXPECT_STREQ(colours().name(Colour::Unnamed), "?");
  EXPECT_FALSE(colours().contains(Colour::Unnamed));
}

TEST(NameTable, ListsNamesInTableOrder) {
  EXPECT_EQ(colours().names(), (std::vector<std::string>{"red", "green", "blue"}));
  EXPECT_EQ(colours().values(), (std::vector<Colour>{Colour::Red, Colour::Green, Colour::Blue}));
  EXPECT_EQ(colours().or_list(), "red, green or blue");
  EXPECT_EQ(colours().comma_list(), "red, green, blue");
}

TEST(NameTable, JoinsNamesForMessages) {
  EXPECT_EQ(join_names({}), "");
  EXPECT_EQ(join_names({"a"}), "a");
  EXPECT_EQ(join_names({"a", "b"}), "a or b");
  EXPECT_EQ(join_names({"a", "b", "c"}), "a, b or c");
  EXPECT_EQ(join_names({"a", "b", "c"}, ", ", " and "), "a, b and c");
  EXPECT_EQ(join_names({"a", "b"}, ", ", ", "), "a, b");
}

TEST(NameTable, RefusesARepeatedNameOrValue) {
  EXPECT_THROW((NameTable<Colour>{{Colour::Red, "red"}, {Colour::Green, "red"}}), std::logic_error);
  EXPECT_THROW((NameTable<Colour>{{Colour::Red, "red"}, {Colour::Red, "crimson"}}), std::logic_error);
  EXPECT_NO_THROW((NameTable<Colour>{}));
}

// The table holds exactly `names` for `values`, in that order, and round-trips each of them.
template <class Enum>
void expect_table(const NameTable<Enum>& table, const std::vector<Enum>& values,
                  const std::vector<std::string>& names) {
  ASSERT_EQ(values.size(), names.size());
  EXPECT_EQ(table.names(), names);
  EXPECT_EQ(table.values(), values);
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(table.name(values[i]), names[i]);
    ASSERT_TRUE(table.parse(names[i]).has_value()) << names[i];
    EXPECT_EQ(*table.parse(names[i]), values[i]) << names[i];
  }
  EXPECT_FALSE(table.parse("no-such-name").has_value());
}

// `parse` refuses "bogus" with exactly `message`.
template <class Parse>
void expect_message(Parse parse, const std::string& message) {
  try {
    parse("bogus");
    ADD_FAILURE() << "accepted 'bogus'";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(EnumNames, CompressorKind) {
  const std::vector<CompressorKind> kinds = {
      CompressorKind::None, CompressorKind::Fp16,       CompressorKind::Bf16,   CompressorKind::TopK,
      CompressorKind::RandomK, CompressorKind::Qsgd,    CompressorKind::Sign,   CompressorKind::ScaledSign,
      CompressorKind::Signum,  CompressorKind::PowerSgd};
  const std::vector<std::string> names = {"none", "fp16", "bf16",        "topk",   "randomk",
                                          "qsgd", "sign", "scaled-sign", "signum", "powersgd"};
  expect_table(compressor_kind_table(), kinds, names);
  EXPECT_EQ(compressor_kind_names(), names);
  for (const CompressorKind k : kinds) {
    EXPECT_EQ(parse_compressor_kind(to_string(k)), k);
    EXPECT_STREQ(to_string(k), compressor_kind_table().name(k));
  }
  expect_message([](const std::string& t) { return parse_compressor_kind(t); },
                 "compression: unknown compressor 'bogus' (expected none, fp16, bf16, topk, randomk, qsgd, sign, "
                 "scaled-sign, signum or powersgd)");
}

TEST(EnumNames, IndexEncodingAndCollective) {
  expect_table(index_encoding_table(), {IndexEncoding::Bits, IndexEncoding::Int32}, {"bits", "int32"});
  EXPECT_EQ(index_encoding_names(), (std::vector<std::string>{"bits", "int32"}));
  EXPECT_EQ(parse_index_encoding("int32"), IndexEncoding::Int32);
  EXPECT_STREQ(to_string(IndexEncoding::Bits), "bits");
  expect_message([](const std::string& t) { return parse_index_encoding(t); },
                 "compression: unknown index encoding 'bogus' (expected bits or int32)");
  expect_table(collective_table(), {Collective::Allreduce, Collective::AllGather}, {"allreduce", "allgather"});
  EXPECT_EQ(collective_names(), (std::vector<std::string>{"allreduce", "allgather"}));
  EXPECT_STREQ(to_string(Collective::Allreduce), "allreduce");
}

TEST(EnumNames, CompressorFamilyAndCompressionSetting) {
  expect_table(compressor_family_table(),
               {CompressorFamily::None, CompressorFamily::Cast, CompressorFamily::Sparsification,
                CompressorFamily::Quantisation, CompressorFamily::Sign, CompressorFamily::LowRank},
               {"none", "cast", "sparsification", "quantisation", "sign", "low-rank"});
  using S = CompressionSetting;
  const std::vector<std::string> names = {
      "ratio",     "sampled_threshold", "unbiased",        "shared_indices",      "qsgd_levels", "qsgd_bucket",
      "powersgd_rank", "signum_momentum", "majority_vote", "sign_of_zero", "predivide", "error_feedback",
      "momentum_correction", "start_step", "min_tensor_size", "indices",          "seed"};
  expect_table(compression_setting_table(),
               {S::Ratio, S::SampledThreshold, S::Unbiased, S::SharedIndices, S::QsgdLevels, S::QsgdBucket,
                S::PowerSgdRank, S::SignumMomentum, S::MajorityVote, S::SignOfZero, S::Predivide, S::ErrorFeedback,
                S::MomentumCorrection, S::StartStep, S::MinTensorSize, S::Indices, S::Seed},
               names);
  EXPECT_EQ(compression_setting_names(), names);
  expect_table(sign_of_zero_table(), {SignOfZero::Plus, SignOfZero::Zero}, {"plus", "zero"});
  EXPECT_EQ(sign_of_zero_names(), (std::vector<std::string>{"plus", "zero"}));
  EXPECT_EQ(parse_sign_of_zero("zero"), SignOfZero::Zero);
  EXPECT_STREQ(to_string(SignOfZero::Plus), "plus");
  EXPECT_THROW(parse_sign_of_zero("minus"), std::invalid_argument);
}

TEST(EnumNames, FlAlgorithm) {
  const std::vector<std::string> names = {"fedavg", "fedprox", "scaffold", "fednova"};
  expect_table(fl_algorithm_table(),
               {FlAlgorithm::FedAvg, FlAlgorithm::FedProx, FlAlgorithm::Scaffold, FlAlgorithm::FedNova}, names);
  EXPECT_EQ(fl_algorithm_names(), names);
  for (const std::string& n : names) EXPECT_EQ(to_string(parse_fl_algorithm(n)), n);
  expect_message([](const std::string& t) { return parse_fl_algorithm(t); },
                 "unknown federated algorithm 'bogus' (fedavg, fedprox, scaffold, fednova)");
  expect_table(fl_setting_table(), {FlSetting::ProxMu, FlSetting::TotalClients}, {"prox_mu", "total_clients"});
}

TEST(EnumNames, StalenessRule) {
  const std::vector<std::string> names = {"none", "inverse", "polynomial", "hinge"};
  expect_table(staleness_rule_table(),
               {StalenessRule::None, StalenessRule::Inverse, StalenessRule::Polynomial, StalenessRule::Hinge}, names);
  EXPECT_EQ(staleness_rule_names(), names);
  for (const std::string& n : names) EXPECT_EQ(to_string(parse_staleness_rule(n)), n);
  expect_message([](const std::string& t) { return parse_staleness_rule(t); },
                 "unknown staleness rule 'bogus' (none, inverse, polynomial, hinge)");
}

TEST(EnumNames, OptimizerKind) {
  const std::vector<std::string> names = {"sgd", "adam", "adamw", "lars", "lamb"};
  expect_table(optimizer_kind_table(),
               {OptimizerKind::Sgd, OptimizerKind::Adam, OptimizerKind::AdamW, OptimizerKind::Lars,
                OptimizerKind::Lamb},
               names);
  EXPECT_EQ(optimizer_kind_names(), names);
  for (const std::string& n : names) EXPECT_EQ(to_string(parse_optimizer_kind(n)), n);
  expect_message([](const std::string& t) { return parse_optimizer_kind(t); },
                 "unknown optimizer 'bogus'; accepted: sgd, adam, adamw, lars, lamb");
}

TEST(EnumNames, LrScalingAndDecay) {
  expect_table(lr_scaling_table(), {LrScaling::None, LrScaling::Linear, LrScaling::Sqrt}, {"none", "linear", "sqrt"});
  EXPECT_EQ(lr_scaling_names(), (std::vector<std::string>{"none", "linear", "sqrt"}));
  EXPECT_EQ(parse_lr_scaling("sqrt"), LrScaling::Sqrt);
  expect_message([](const std::string& t) { return parse_lr_scaling(t); },
                 "unknown learning-rate scaling 'bogus'; accepted: none, linear, sqrt");
  expect_table(lr_decay_table(), {LrDecay::Constant, LrDecay::Step, LrDecay::Cosine}, {"constant", "step", "cosine"});
  EXPECT_EQ(lr_decay_names(), (std::vector<std::string>{"constant", "step", "cosine"}));
  EXPECT_EQ(parse_lr_decay("cosine"), LrDecay::Cosine);
  expect_message([](const std::string& t) { return parse_lr_decay(t); },
                 "unknown learning-rate decay 'bogus'; accepted: constant, step, cosine");
}

TEST(EnumNames, LossScaleMode) {
  const std::vector<std::string> names = {"none", "static", "dynamic"};
  expect_table(loss_scale_mode_table(), {LossScaleMode::None, LossScaleMode::Static, LossScaleMode::Dynamic}, names);
  EXPECT_EQ(loss_scale_mode_names(), names);
  for (const std::string& n : names) EXPECT_EQ(to_string(parse_loss_scale_mode(n)), n);
  expect_message([](const std::string& t) { return parse_loss_scale_mode(t); },
                 "unknown loss scaling 'bogus'; accepted: none, static, dynamic");
}

TEST(EnumNames, NumberFormatTakesItsNamesFromGpu) {
  const std::vector<gpu::NumberFormat> formats = {gpu::NumberFormat::Fp32, gpu::NumberFormat::Bf16,
                                                  gpu::NumberFormat::Fp16};
  expect_table(number_format_table(), formats, {"fp32", "bf16", "fp16"});
  EXPECT_EQ(number_format_names(), (std::vector<std::string>{"fp32", "bf16", "fp16"}));
  for (const gpu::NumberFormat f : formats) EXPECT_EQ(parse_number_format(gpu::to_string(f)), f);
  expect_message([](const std::string& t) { return parse_number_format(t); },
                 "unknown number format 'bogus'; accepted: fp32, bf16, fp16");
}

TEST(EnumNames, Activation) {
  const std::vector<std::string> names = {"relu", "gelu", "tanh"};
  expect_table(activation_table(), {Activation::Relu, Activation::Gelu, Activation::Tanh}, names);
  EXPECT_EQ(activation_names(), names);
  for (const std::string& n : names) EXPECT_EQ(to_string(parse_activation(n)), n);
  expect_message([](const std::string& t) { return parse_activation(t); },
                 "unknown activation 'bogus' (expected relu, gelu or tanh)");
}

TEST(EnumNames, Architecture) {
  const std::vector<std::string> names = {"logreg", "mlp", "lenet", "cnn", "lenet-nopad", "transformer"};
  expect_table(architecture_table(),
               {Architecture::LogReg, Architecture::Mlp, Architecture::LeNet, Architecture::Cnn, Architecture::LeNetNoPad,
                Architecture::Transformer},
               names);
  EXPECT_EQ(architecture_names(), names);
  for (const std::string& n : names) EXPECT_EQ(to_string(parse_architecture(n)), n);
  const std::string message =
      "unknown network architecture 'bogus' (expected logreg, mlp, lenet, cnn, lenet-nopad or transformer)";
  expect_message([](const std::string& t) { return parse_architecture(t); }, message);
  // NetworkSpec holds an Architecture: make_network names it through the same table.
  NetworkSpec lenet;
  lenet.arch = Architecture::LeNet;
  lenet.channels = 0;
  try {
    make_network<float>(lenet);
    ADD_FAILURE() << "a network of zero channels was built";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("network 'lenet': ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace dtsim::models
