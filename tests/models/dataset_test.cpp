// The IDX/gzip reader on the real Fashion-MNIST files and on broken files made here.
#include <gtest/gtest.h>
#include <zlib.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "models/dataset.hpp"

namespace dtsim::models {
namespace {

namespace fs = std::filesystem;

TEST(FashionMnist, LoadsBothSplitsFromTheDebianPackage) {
  const Dataset train = load_fashion_mnist(DTSIM_FASHION_MNIST_DIR, Split::Train);
  const Dataset test = load_fashion_mnist(DTSIM_FASHION_MNIST_DIR, Split::Test);
  EXPECT_EQ(train.num_samples, 60000);
  EXPECT_EQ(test.num_samples, 10000);
  EXPECT_EQ(train.num_features, 784);
  EXPECT_EQ(train.height * train.width * train.channels, 784);
  // Fashion-MNIST is balanced: 6000 training and 1000 test images per class (Xiao et al., 2017).
  std::array<int, 10> train_count{}, test_count{};
  for (const int32_t y : train.labels) ++train_count[y];
  for (const int32_t y : test.labels) ++test_count[y];
  for (int c = 0; c < 10; ++c) {
    EXPECT_EQ(train_count[c], 6000) << c;
    EXPECT_EQ(test_count[c], 1000) << c;
  }
  float lo = 1, hi = 0;
  for (const float v : train.features) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 1.0f);
  EXPECT_EQ(train.content_hash.rfind("crc32:", 0), 0u);
  EXPECT_NE(train.content_hash, test.content_hash);
  EXPECT_EQ(train.content_hash, dataset_content_hash(train));
}

TEST(FashionMnist, MaxSamplesKeepsTheFirstSamples) {
  const Dataset full = load_fashion_mnist(DTSIM_FASHION_MNIST_DIR, Split::Test);
  const Dataset part = load_fashion_mnist(DTSIM_FASHION_MNIST_DIR, Split::Test, 100);
  ASSERT_EQ(part.num_samples, 100);
  EXPECT_EQ(part.labels, std::vector<int32_t>(full.labels.begin(), full.labels.begin() + 100));
  EXPECT_EQ(part.features, std::vector<float>(full.features.begin(), full.features.begin() + 100 * 784));
  EXPECT_NE(part.content_hash, full.content_hash);
}

TEST(GatherBatch, CopiesTheChosenRowsAndConverts) {
  Dataset d;
  d.num_samples = 3;
  d.num_features = 2;
  d.num_classes = 2;
  d.features = {0, 1, 2, 3, 4, 5};
  d.labels = {0, 1, 0};
  const std::vector<int32_t> idx{2, 0};
  std::vector<double> x(4);
  std::vector<int32_t> y(2);
  gather_batch(d, idx.data(), 2, x.data(), y.data());
  EXPECT_EQ(x, (std::vector<double>{4, 5, 0, 1}));
  EXPECT_EQ(y, (std::vector<int32_t>{0, 0}));
}

// Writes a gzip'ed IDX file with the given header words and payload.
void write_idx(const fs::path& path, const std::vector<uint32_t>& header, const std::vector<uint8_t>& payload) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  for (const uint32_t w : header) {
    const uint8_t be[4] = {uint8_t(w >> 24), uint8_t(w >> 16), uint8_t(w >> 8), uint8_t(w)};
    gzwrite(f, be, 4);
  }
  if (!payload.empty()) gzwrite(f, payload.data(), static_cast<unsigned>(payload.size()));
  gzclose(f);
}

class BrokenFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dtsim_dataset_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path images() const { return dir_ / "t10k-images-idx3-ubyte.gz"; }
  fs::path labels() const { return dir_ / "t10k-labels-idx1-ubyte.gz"; }
  std::string error_of_loading() {
    try {
      load_fashion_mnist(dir_.string(), Split::Test);
    } catch (const DatasetError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(BrokenFiles, ValidTinyFilesLoad) {
  write_idx(images(), {0x803, 2, 28, 28}, std::vector<uint8_t>(2 * 784, 255));
  write_idx(labels(), {0x801, 2}, {3, 9});
  const Dataset d = load_fashion_mnist(dir_.string(), Split::Test);
  EXPECT_EQ(d.num_samples, 2);
  EXPECT_EQ(d.labels, (std::vector<int32_t>{3, 9}));
  EXPECT_EQ(d.features[0], 1.0f);
}

TEST_F(BrokenFiles, MissingFileNamesThePath) {
  const std::string msg = error_of_loading();
  EXPECT_NE(msg.find("t10k-images-idx3-ubyte.gz"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no such file"), std::string::npos) << msg;
}

TEST_F(BrokenFiles, BadMagicNumber) {
  write_idx(images(), {0x1234, 2, 28, 28}, std::vector<uint8_t>(2 * 784));
  write_idx(labels(), {0x801, 2}, {0, 1});
  EXPECT_NE(error_of_loading().find("magic"), std::string::npos);
}

TEST_F(BrokenFiles, TruncatedData) {
  write_idx(images(), {0x803, 2, 28, 28}, std::vector<uint8_t>(784 + 10));
  write_idx(labels(), {0x801, 2}, {0, 1});
  EXPECT_NE(error_of_loading().find("truncated"), std::string::npos);
}

TEST_F(BrokenFiles, LabelCountMismatch) {
  write_idx(images(), {0x803, 2, 28, 28}, std::vector<uint8_t>(2 * 784));
  write_idx(labels(), {0x801, 3}, {0, 1, 2});
  EXPECT_NE(error_of_loading().find("labels for"), std::string::npos);
}

TEST_F(BrokenFiles, LabelOutOfRange) {
  write_idx(images(), {0x803, 1, 28, 28}, std::vector<uint8_t>(784));
  write_idx(labels(), {0x801, 1}, {10});
  EXPECT_NE(error_of_loading().find("not in 0..9"), std::string::npos);
}

TEST_F(BrokenFiles, WrongImageSize) {
  write_idx(images(), {0x803, 1, 32, 32}, std::vector<uint8_t>(1024));
  write_idx(labels(), {0x801, 1}, {1});
  EXPECT_NE(error_of_loading().find("28×28"), std::string::npos);
}

}  // namespace
}  // namespace dtsim::models
