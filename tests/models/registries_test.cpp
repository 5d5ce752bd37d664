// The registries of compressors, federated algorithms and architectures: one descriptor per enum value, in
// enum order, with the settings each one reads; validate() and make_network() follow them.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/architectures.hpp"
#include "models/compression/registry.hpp"
#include "models/federated.hpp"

namespace dtsim::models {
namespace {

using S = CompressionSetting;

const std::vector<CompressorKind> kAllKinds = {
    CompressorKind::None,    CompressorKind::Fp16, CompressorKind::Bf16, CompressorKind::TopK,
    CompressorKind::RandomK, CompressorKind::Qsgd, CompressorKind::Sign, CompressorKind::ScaledSign,
    CompressorKind::Signum,  CompressorKind::PowerSgd};

TEST(CompressorRegistry, OneDescriptorPerKindInEnumOrder) {
  const std::vector<CompressorDescriptor>& registry = compressor_registry();
  ASSERT_EQ(registry.size(), kAllKinds.size());
  for (size_t i = 0; i < kAllKinds.size(); ++i) {
    const CompressorKind k = kAllKinds[i];
    EXPECT_EQ(registry[i].kind, k) << i;
    EXPECT_EQ(
        std::count_if(registry.begin(), registry.end(), [k](const CompressorDescriptor& d) { return d.kind == k; }), 1);
    EXPECT_EQ(&compressor_descriptor(k), &registry[i]);
    EXPECT_STREQ(registry[i].name, to_string(k));
    EXPECT_NE(registry[i].make_float, nullptr) << registry[i].name;
    EXPECT_NE(registry[i].make_double, nullptr) << registry[i].name;
    EXPECT_TRUE(std::is_sorted(registry[i].settings.begin(), registry[i].settings.end())) << registry[i].name;
  }
  EXPECT_THROW(compressor_descriptor(static_cast<CompressorKind>(99)), std::invalid_argument);
}

TEST(CompressorRegistry, Families) {
  const std::vector<CompressorFamily> families = {
      CompressorFamily::None,   CompressorFamily::Cast,           CompressorFamily::Cast,
      CompressorFamily::Sparsification, CompressorFamily::Sparsification, CompressorFamily::Quantisation,
      CompressorFamily::Sign,   CompressorFamily::Sign,           CompressorFamily::Sign,
      CompressorFamily::LowRank};
  for (size_t i = 0; i < kAllKinds.size(); ++i)
    EXPECT_EQ(compressor_descriptor(kAllKinds[i]).family, families[i]) << to_string(kAllKinds[i]);
}

TEST(CompressorRegistry, SettingsEachCompressorReads) {
  const std::vector<S> common = {S::ErrorFeedback, S::StartStep, S::MinTensorSize};
  const auto with_common = [&](std::vector<S> own) {
    own.insert(own.end(), common.begin(), common.end());
    std::sort(own.begin(), own.end());
    return own;
  };
  EXPECT_EQ(compressor_descriptor(CompressorKind::None).settings, std::vector<S>{});
  EXPECT_EQ(compressor_descriptor(CompressorKind::Fp16).settings, with_common({S::Predivide}));
  EXPECT_EQ(compressor_descriptor(CompressorKind::Bf16).settings, with_common({S::Predivide}));
  EXPECT_EQ(compressor_descriptor(CompressorKind::TopK).settings,
            with_common({S::Ratio, S::SampledThreshold, S::MomentumCorrection, S::Indices, S::Seed}));
  EXPECT_EQ(compressor_descriptor(CompressorKind::RandomK).settings,
            with_common({S::Ratio, S::Unbiased, S::SharedIndices, S::MomentumCorrection, S::Indices, S::Seed}));
  EXPECT_EQ(compressor_descriptor(CompressorKind::Qsgd).settings, with_common({S::QsgdLevels, S::QsgdBucket, S::Seed}));
  EXPECT_EQ(compressor_descriptor(CompressorKind::Sign).settings, with_common({S::MajorityVote, S::SignOfZero}));
  EXPECT_EQ(compressor_descriptor(CompressorKind::ScaledSign).settings, with_common({S::SignOfZero}));
  EXPECT_EQ(compressor_descriptor(CompressorKind::Signum).settings,
            with_common({S::SignumMomentum, S::MajorityVote, S::SignOfZero}));
  EXPECT_EQ(compressor_descriptor(CompressorKind::PowerSgd).settings, with_common({S::PowerSgdRank, S::Seed}));

  using Kinds = std::vector<CompressorKind>;
  EXPECT_EQ(compressors_reading(S::MajorityVote), (Kinds{CompressorKind::Sign, CompressorKind::Signum}));
  EXPECT_EQ(compressors_reading(S::SignOfZero),
            (Kinds{CompressorKind::Sign, CompressorKind::ScaledSign, CompressorKind::Signum}));
  EXPECT_EQ(compressors_reading(S::Predivide), (Kinds{CompressorKind::Fp16, CompressorKind::Bf16}));
  EXPECT_EQ(compressors_reading(S::MomentumCorrection),
            (Kinds{CompressorKind::TopK, CompressorKind::RandomK}));
  EXPECT_TRUE(compressor_descriptor(CompressorKind::TopK).reads(S::Ratio));
  EXPECT_FALSE(compressor_descriptor(CompressorKind::Qsgd).reads(S::Ratio));
}

// validate() refuses each switch-like option exactly for the kinds that do not read it, with the message it
// has always had.
TEST(CompressorRegistry, ValidateFollowsTheDescriptors) {
  struct Option {
    S setting;
    void (*set)(CompressionSettings&);
    const char* readers;
  };
  const Option options[] = {
      {S::MajorityVote, [](CompressionSettings& s) { s.majority_vote = true; }, "sign and signum"},
      {S::SignOfZero, [](CompressionSettings& s) { s.sign_of_zero = SignOfZero::Zero; }, "sign, scaled-sign and signum"},
      {S::Predivide, [](CompressionSettings& s) { s.predivide = true; }, "fp16 and bf16"},
      {S::SampledThreshold, [](CompressionSettings& s) { s.sampled_threshold = true; }, "topk"},
      {S::Unbiased, [](CompressionSettings& s) { s.unbiased = true; }, "randomk"},
      {S::MomentumCorrection, [](CompressionSettings& s) { s.momentum_correction = 0.5; }, "topk and randomk"},
  };
  for (const CompressorKind k : kAllKinds) {
    for (const Option& o : options) {
      CompressionSettings s;
      s.kind = k;
      s.error_feedback = true;
      o.set(s);
      if (compressor_descriptor(k).reads(o.setting)) {
        EXPECT_NO_THROW(validate(s)) << to_string(k) << " " << to_string(o.setting);
        continue;
      }
      try {
        validate(s);
        ADD_FAILURE() << to_string(k) << " accepted " << to_string(o.setting);
      } catch (const CompressionSettingError& e) {
        EXPECT_EQ(e.setting(), to_string(o.setting));
        EXPECT_EQ(std::string(e.what()), std::string("compression: ") + to_string(o.setting) + " applies to " +
                                             o.readers + ", not " + to_string(k));
      }
    }
  }
}

// Every descriptor's factory makes a codec the engine runs: a one-step compression of a small matrix.
TEST(CompressorRegistry, EveryKindBuildsAWorkingCompressor) {
  gpu::CpuOps<double> ops;
  for (const CompressorKind k : kAllKinds) {
    CompressionSettings s;
    s.kind = k;
    s.ratio = 0.5;
    Compressor<double> c(ops, {{{"w", 0, 6, false}, 2, 3}}, 6, s, 0);
    std::vector<double> g = {1.0, -2.0, 3.0, -4.0, 5.0, -6.0};
    const CompressionResult r = c.compress(g.data(), 0);
    EXPECT_EQ(r.wire.size(), 1u) << to_string(k);
    EXPECT_GT(r.stats.wire_bytes, 0u) << to_string(k);
  }
}

TEST(FlAlgorithmRegistry, OneDescriptorPerAlgorithmInEnumOrder) {
  const std::vector<FlAlgorithm> all = {FlAlgorithm::FedAvg, FlAlgorithm::FedProx, FlAlgorithm::Scaffold,
                                        FlAlgorithm::FedNova};
  const std::vector<FlAlgorithmDescriptor>& registry = fl_algorithm_registry();
  ASSERT_EQ(registry.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const FlAlgorithm a = all[i];
    EXPECT_EQ(registry[i].algorithm, a);
    EXPECT_EQ(std::count_if(registry.begin(), registry.end(),
                            [a](const FlAlgorithmDescriptor& d) { return d.algorithm == a; }),
              1);
    EXPECT_EQ(&fl_algorithm_descriptor(a), &registry[i]);
    EXPECT_STREQ(registry[i].name, to_string(a));
  }
  EXPECT_THROW(fl_algorithm_descriptor(static_cast<FlAlgorithm>(99)), std::invalid_argument);
}

TEST(FlAlgorithmRegistry, WhatEachAlgorithmReadsAndKeeps) {
  const FlAlgorithmDescriptor& avg = fl_algorithm_descriptor(FlAlgorithm::FedAvg);
  const FlAlgorithmDescriptor& prox = fl_algorithm_descriptor(FlAlgorithm::FedProx);
  const FlAlgorithmDescriptor& scaffold = fl_algorithm_descriptor(FlAlgorithm::Scaffold);
  const FlAlgorithmDescriptor& nova = fl_algorithm_descriptor(FlAlgorithm::FedNova);
  EXPECT_EQ(avg.settings, std::vector<FlSetting>{});
  EXPECT_EQ(prox.settings, std::vector<FlSetting>{FlSetting::ProxMu});
  EXPECT_EQ(scaffold.settings, std::vector<FlSetting>{FlSetting::TotalClients});
  EXPECT_EQ(nova.settings, std::vector<FlSetting>{});
  EXPECT_TRUE(prox.reads(FlSetting::ProxMu));
  EXPECT_FALSE(avg.reads(FlSetting::ProxMu));
  // Exactly one algorithm has each of the three parts.
  EXPECT_TRUE(prox.proximal_term && !prox.control_variates && !prox.normalised_averaging);
  EXPECT_TRUE(!scaffold.proximal_term && scaffold.control_variates && !scaffold.normalised_averaging);
  EXPECT_TRUE(!nova.proximal_term && !nova.control_variates && nova.normalised_averaging);
  EXPECT_TRUE(!avg.proximal_term && !avg.control_variates && !avg.normalised_averaging);
}

TEST(ArchitectureRegistry, OneDescriptorPerArchitectureInEnumOrder) {
  const std::vector<Architecture> all = {Architecture::LogReg, Architecture::Mlp,        Architecture::LeNet,
                                         Architecture::Cnn,    Architecture::LeNetNoPad, Architecture::Transformer};
  const std::vector<ArchitectureDescriptor>& registry = architecture_registry();
  ASSERT_EQ(registry.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const Architecture a = all[i];
    EXPECT_EQ(registry[i].architecture, a);
    EXPECT_EQ(std::count_if(registry.begin(), registry.end(),
                            [a](const ArchitectureDescriptor& d) { return d.architecture == a; }),
              1);
    EXPECT_EQ(&architecture_descriptor(a), &registry[i]);
    EXPECT_STREQ(registry[i].name, to_string(a));
    // Every classifier has builders; the span transformer (built by the QA objective) has none.
    EXPECT_EQ(registry[i].build_float == nullptr, registry[i].span_transformer) << registry[i].name;
    EXPECT_EQ(registry[i].build_double == nullptr, registry[i].span_transformer) << registry[i].name;
  }
  EXPECT_THROW(architecture_descriptor(static_cast<Architecture>(99)), std::invalid_argument);
}

TEST(ArchitectureRegistry, HiddenWidthsAndImages) {
  for (const ArchitectureDescriptor& d : architecture_registry()) {
    const std::string name = d.name;
    EXPECT_EQ(d.takes_hidden, name == "mlp") << name;
    EXPECT_EQ(d.needs_images, name == "lenet" || name == "lenet-nopad" || name == "cnn") << name;
    EXPECT_EQ(d.span_transformer, name == "transformer") << name;
  }
}

TEST(ArchitectureRegistry, MakeNetworkBuildsEachThroughItsDescriptor) {
  for (const ArchitectureDescriptor& d : architecture_registry()) {
    NetworkSpec spec;
    spec.arch = d.architecture;
    if (d.takes_hidden) spec.hidden = {8};
    if (d.span_transformer) {
      EXPECT_THROW(make_network<float>(spec), std::invalid_argument);
      continue;
    }
    const auto net = make_network<float>(spec);
    EXPECT_EQ(net->description().rfind(std::string(d.name) + " ", 0), 0u) << net->description();
    EXPECT_EQ(make_network<double>(spec)->num_params(), net->num_params()) << d.name;
  }
  NetworkSpec lenet;
  lenet.arch = Architecture::LeNet;
  lenet.hidden = {8};
  try {
    make_network<float>(lenet);
    ADD_FAILURE() << "lenet accepted hidden widths";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "network 'lenet': hidden widths apply to mlp only");
  }
  // A name outside the table never becomes an Architecture: it is refused where text is parsed.
  EXPECT_FALSE(architecture_table().parse("resnet").has_value());
  EXPECT_THROW(parse_architecture("resnet"), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::models
