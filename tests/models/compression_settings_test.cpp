// Compression settings: names, validation (each bad value rejected with the setting named), the matrix shapes
// PowerSGD gives a network's tensors, and the layouts a compressor accepts.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/architectures.hpp"
#include "models/compression/compression.hpp"
#include "models/conv_layers.hpp"

namespace dtsim::models {
namespace {

TEST(CompressionSettings, NamesRoundTrip) {
  const CompressorKind kinds[] = {CompressorKind::None,    CompressorKind::Fp16,       CompressorKind::Bf16,
                                  CompressorKind::TopK,    CompressorKind::RandomK,    CompressorKind::Qsgd,
                                  CompressorKind::Sign,    CompressorKind::ScaledSign, CompressorKind::Signum,
                                  CompressorKind::PowerSgd};
  for (const CompressorKind k : kinds) EXPECT_EQ(parse_compressor_kind(to_string(k)), k);
  EXPECT_STREQ(to_string(CompressorKind::ScaledSign), "scaled-sign");
  EXPECT_EQ(parse_index_encoding("bits"), IndexEncoding::Bits);
  EXPECT_EQ(parse_index_encoding("int32"), IndexEncoding::Int32);
  EXPECT_STREQ(to_string(Collective::AllGather), "allgather");
}

TEST(CompressionSettings, UnknownNamesListTheAcceptedOnes) {
  try {
    parse_compressor_kind("top-k");
    FAIL() << "accepted 'top-k'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("scaled-sign"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_compressor_kind("TopK"), std::invalid_argument);
  EXPECT_THROW(parse_index_encoding("int64"), std::invalid_argument);
}

// `mutate` makes one setting bad; the message must name it.
template <class Mutate>
void expect_rejected(const std::string& setting, Mutate mutate) {
  CompressionSettings s;
  mutate(s);
  try {
    validate(s);
    FAIL() << setting << " was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(setting), std::string::npos) << e.what();
  }
}

TEST(CompressionSettings, BadValuesAreRejectedNamingTheSetting) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expect_rejected("ratio", [](CompressionSettings& s) { s.ratio = 0.0; });
  expect_rejected("ratio", [](CompressionSettings& s) { s.ratio = 1.5; });
  expect_rejected("ratio", [nan](CompressionSettings& s) { s.ratio = nan; });
  expect_rejected("qsgd_levels", [](CompressionSettings& s) { s.qsgd_levels = 0; });
  expect_rejected("powersgd_rank", [](CompressionSettings& s) { s.powersgd_rank = 0; });
  expect_rejected("signum_momentum", [](CompressionSettings& s) { s.signum_momentum = 1.0; });
  expect_rejected("signum_momentum", [](CompressionSettings& s) { s.signum_momentum = -0.1; });
  expect_rejected("start_step", [](CompressionSettings& s) { s.start_step = -1; });
  // Settings that only mean something for other kinds.
  expect_rejected("majority_vote", [](CompressionSettings& s) {
    s.kind = CompressorKind::ScaledSign;
    s.majority_vote = true;
  });
  expect_rejected("predivide", [](CompressionSettings& s) {
    s.kind = CompressorKind::TopK;
    s.predivide = true;
  });
  expect_rejected("sampled_threshold", [](CompressionSettings& s) {
    s.kind = CompressorKind::RandomK;
    s.sampled_threshold = true;
  });
  expect_rejected("unbiased", [](CompressionSettings& s) {
    s.kind = CompressorKind::TopK;
    s.unbiased = true;
  });
}

TEST(CompressionSettings, GoodCombinationsAreAccepted) {
  CompressionSettings s;
  s.kind = CompressorKind::Signum;
  s.majority_vote = true;
  EXPECT_NO_THROW(validate(s));
  s = {};
  s.kind = CompressorKind::Bf16;
  s.predivide = true;
  s.error_feedback = true;
  EXPECT_NO_THROW(validate(s));
  s = {};
  s.kind = CompressorKind::RandomK;
  s.unbiased = true;
  s.ratio = 1.0;
  EXPECT_NO_THROW(validate(s));
}

// Shapes by hand: Dense(12 → 5) weight 12 × 5; conv 3@3×3 over 2 channels: 3 × (2·3·3); embedding of 7 ids
// into 4 dims: 7 × 4; biases and a layer norm's gain and shift are vectors.
TEST(CompressionLayouts, NetworkWeightsGetTheirMatrixShapes) {
  std::vector<std::unique_ptr<Layer<float>>> layers;
  layers.push_back(std::make_unique<Conv2d<float>>(ImageShape{2, 4, 4}, 3, 3, 3, 1, 1));  // out 3 × 4 × 4 = 48
  layers.push_back(std::make_unique<Dense<float>>(48, 12));
  layers.push_back(std::make_unique<LayerNorm<float>>(12));
  layers.push_back(std::make_unique<Dense<float>>(12, 5));
  const Network<float> net("test", std::move(layers));
  const std::vector<TensorLayout> l = tensor_layouts(net);
  ASSERT_EQ(l.size(), 8u);
  const size_t expected[8][2] = {{3, 18}, {0, 0}, {48, 12}, {0, 0}, {0, 0}, {0, 0}, {12, 5}, {0, 0}};
  for (size_t i = 0; i < l.size(); ++i) {
    EXPECT_EQ(l[i].rows, expected[i][0]) << l[i].tensor.name;
    EXPECT_EQ(l[i].cols, expected[i][1]) << l[i].tensor.name;
    EXPECT_EQ(l[i].tensor.offset, net.param_tensors()[i].offset);
  }

  std::vector<std::unique_ptr<Layer<float>>> text;
  text.push_back(std::make_unique<Embedding<float>>(3, 7, 4));
  text.push_back(std::make_unique<Dense<float>>(12, 2));
  const Network<float> lm("embedding", std::move(text));
  const std::vector<TensorLayout> e = tensor_layouts(lm);
  EXPECT_EQ(e[0].rows, 7u);
  EXPECT_EQ(e[0].cols, 4u);
}

TEST(CompressionLayouts, VectorLayoutsHaveNoShape) {
  const std::vector<TensorLayout> l = vector_layouts({{"x", 0, 2, false}});
  ASSERT_EQ(l.size(), 1u);
  EXPECT_FALSE(l[0].is_matrix());
}

TEST(CompressionLayouts, CompressorsRejectLayoutsThatDoNotTileTheVector) {
  gpu::CpuOps<double> ops;
  CompressionSettings s;
  const auto make = [&](std::vector<TensorLayout> layouts, size_t n) {
    Compressor<double> c(ops, std::move(layouts), n, s, 0);
  };
  EXPECT_NO_THROW(make({{{"a", 0, 6, false}, 2, 3}, {{"b", 6, 2, true}, 0, 0}}, 8));
  EXPECT_THROW(make({{{"a", 0, 6, false}, 2, 3}, {{"b", 7, 1, true}, 0, 0}}, 8), std::invalid_argument);  // gap
  EXPECT_THROW(make({{{"a", 0, 6, false}, 2, 2}}, 6), std::invalid_argument);  // 2 × 2 is not 6 values
  EXPECT_THROW(make({{{"a", 0, 6, false}, 2, 3}}, 7), std::invalid_argument);  // one value uncovered
  s.ratio = 0;
  EXPECT_THROW(make({{{"a", 0, 6, false}, 2, 3}}, 6), std::invalid_argument);  // settings are validated
  s = {};
  EXPECT_THROW(GroupCompressor<double>(ops, {{{"a", 0, 6, false}, 2, 3}}, 6, s, 0), std::invalid_argument);
  EXPECT_THROW(Compressor<double>(ops, {{{"a", 0, 6, false}, 2, 3}}, 6, s, -1), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::models
