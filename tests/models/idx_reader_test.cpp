// The IDX reader on bytes in memory (parse_fashion_mnist): every malformed header or payload is a
// DatasetError naming the input, and no header makes it allocate more than the bytes it was given imply.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "models/dataset.hpp"

namespace dtsim::models {
namespace {

namespace fs = std::filesystem;

// IDX bytes: big-endian header words, then the payload.
std::string idx(const std::vector<uint32_t>& header, const std::string& payload) {
  std::string out;
  for (const uint32_t w : header) out += {char(w >> 24), char(w >> 16), char(w >> 8), char(w)};
  return out + payload;
}

std::string images(uint32_t count, char pixel = '\x80') { return idx({0x803, count, 28, 28}, std::string(784 * count, pixel)); }

std::string error_of(const std::string& image_bytes, const std::string& label_bytes) {
  try {
    parse_fashion_mnist(image_bytes, label_bytes, "img", "lbl", Split::Test);
  } catch (const DatasetError& e) {
    return e.what();
  }
  return "";
}

TEST(IdxReader, ParsesValidBytes) {
  const Dataset d = parse_fashion_mnist(images(3, '\xFF'), idx({0x801, 3}, std::string("\x01\x09\x00", 3)), "img", "lbl", Split::Train);
  EXPECT_EQ(d.name, "fashion-mnist/train");
  EXPECT_EQ(d.num_samples, 3);
  EXPECT_EQ(d.num_features, 784);
  EXPECT_EQ(d.labels, (std::vector<int32_t>{1, 9, 0}));
  EXPECT_EQ(d.features.size(), 3u * 784u);
  EXPECT_EQ(d.features[0], 1.0f);
  const Dataset two = parse_fashion_mnist(images(3), idx({0x801, 3}, std::string("\x01\x02\x0A", 3)), "img", "lbl",
                                          Split::Test, 2);  // the third label is out of range but not kept
  EXPECT_EQ(two.num_samples, 2);
}

TEST(IdxReader, HeaderProblems) {
  const std::string labels = idx({0x801, 1}, std::string(1, '\0'));
  EXPECT_EQ(error_of("", labels), "img: truncated in the header (0 bytes)");
  EXPECT_EQ(error_of(std::string("\0\0\x08\x03\0\0", 6), labels), "img: truncated in the header (6 bytes, 16 expected)");
  EXPECT_EQ(error_of(idx({0x0D03, 1, 28, 28}, std::string(784, '\0')), labels),
            "img: not an IDX file of unsigned bytes (bad magic number)");
  EXPECT_EQ(error_of(idx({0x802, 28, 28}, std::string(784, '\0')), labels), "img: expected 3 dimensions, found 2");
  EXPECT_EQ(error_of(images(1), idx({0x803, 1, 1, 1}, "\x01")), "lbl: expected 1 dimensions, found 3");
}

TEST(IdxReader, SizesAreCheckedBeforeAnythingIsAllocated) {
  const std::string labels = idx({0x801, 1}, std::string(1, '\0'));
  // 21913098 × 28 × 28 bytes is just under the old 16 GiB cap, which allocated it before reading.
  EXPECT_EQ(error_of(idx({0x803, 21913098, 28, 28}, ""), labels),
            "img: implausible array size in header (dimension 2 is 28; at most 1 GiB of data is accepted)");
  // 2^32 - 1 in every dimension: the product does not fit 64 bits either.
  EXPECT_EQ(error_of(idx({0x803, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, ""), labels),
            "img: implausible array size in header (dimension 0 is 4294967295; at most 1 GiB of data is accepted)");
  EXPECT_EQ(error_of(idx({0x803, 0, 28, 28}, ""), labels),
            "img: implausible array size in header (dimension 0 is 0; at most 1 GiB of data is accepted)");
  // A plausible header with less data than it declares.
  EXPECT_EQ(error_of(idx({0x803, 60000, 28, 28}, std::string(784, '\0')), labels),
            "img: truncated: the header declares 47040000 bytes of data, 784 follow");
  EXPECT_EQ(error_of(images(1) + "x", labels), "img: has trailing bytes after the declared data");
}

TEST(IdxReader, ContentProblems) {
  EXPECT_EQ(error_of(idx({0x803, 1, 32, 32}, std::string(1024, '\0')), idx({0x801, 1}, std::string(1, '\0'))),
            "img: expected 28×28 images, found 32×32");
  EXPECT_EQ(error_of(images(2), idx({0x801, 3}, std::string(3, '\0'))), "lbl: holds 3 labels for 2 images");
  EXPECT_EQ(error_of(images(2), idx({0x801, 2}, std::string("\x00\x0A", 2))), "lbl: label 10 of sample 1 is not in 0..9");
}

TEST(IdxReader, CorruptGzipFileNamesThePath) {
  const fs::path dir = fs::temp_directory_path() / ("dtsim_idx_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path image_file = dir / "t10k-images-idx3-ubyte.gz";
  gzFile f = gzopen(image_file.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  const std::string bytes = images(50);
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
  fs::resize_file(image_file, fs::file_size(image_file) / 2);  // cut the gzip stream
  std::string msg;
  try {
    load_fashion_mnist(dir.string(), Split::Test);
  } catch (const DatasetError& e) {
    msg = e.what();
  }
  fs::remove_all(dir);
  EXPECT_EQ(msg.rfind(image_file.string() + ": truncated or corrupt gzip data", 0), 0u) << msg;
}

}  // namespace
}  // namespace dtsim::models
