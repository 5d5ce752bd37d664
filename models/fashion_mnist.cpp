// Reader for the IDX format of (Fashion-)MNIST, straight from the .gz files through zlib.
#include <zlib.h>

#include <array>
#include <cstdio>
#include <memory>

#include "dataset.hpp"

namespace dtsim::models {
namespace {

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

struct IdxArray {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> bytes;
};

uint32_t big_endian(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

void read_exact(gzFile f, void* out, size_t n, const std::string& path, const char* what) {
  auto* dst = static_cast<uint8_t*>(out);
  size_t done = 0;
  while (done < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - done, 1u << 30));
    const int got = gzread(f, dst + done, chunk);
    if (got <= 0) {
      int errnum = 0;
      const char* msg = gzerror(f, &errnum);
      throw DatasetError(path, std::string("truncated or corrupt while reading ") + what +
                                   (errnum != Z_OK && msg ? std::string(" (") + msg + ")" : ""));
    }
    done += static_cast<size_t>(got);
  }
}

// IDX: magic 0x0000 <type> <ndims>, then ndims big-endian uint32 sizes, then the data. We accept unsigned
// bytes (type 0x08) only, which is what (Fashion-)MNIST uses.
IdxArray read_idx(const std::string& path, size_t expected_ndims) {
  GzFile f(gzopen(path.c_str(), "rb"));
  if (!f) throw DatasetError(path, "cannot open (is the package dataset-fashion-mnist installed?)");
  std::array<uint8_t, 4> magic{};
  read_exact(f.get(), magic.data(), 4, path, "the header");
  if (magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08)
    throw DatasetError(path, "not an IDX file of unsigned bytes (bad magic number)");
  if (magic[3] != expected_ndims)
    throw DatasetError(path, "expected " + std::to_string(expected_ndims) + " dimensions, found " +
                                 std::to_string(magic[3]));
  IdxArray arr;
  size_t total = 1;
  for (size_t d = 0; d < expected_ndims; ++d) {
    std::array<uint8_t, 4> b{};
    read_exact(f.get(), b.data(), 4, path, "the header");
    arr.dims.push_back(big_endian(b.data()));
    total *= arr.dims.back();
  }
  if (total == 0 || total > (size_t(1) << 34)) throw DatasetError(path, "implausible array size in header");
  arr.bytes.resize(total);
  read_exact(f.get(), arr.bytes.data(), total, path, "the data");
  uint8_t extra = 0;
  if (gzread(f.get(), &extra, 1) > 0) throw DatasetError(path, "has trailing bytes after the declared data");
  return arr;
}

}  // namespace

Dataset load_fashion_mnist(const std::string& directory, Split split, int max_samples) {
  const std::string prefix = directory + "/" + (split == Split::Train ? "train" : "t10k");
  const std::string images_path = prefix + "-images-idx3-ubyte.gz";
  const std::string labels_path = prefix + "-labels-idx1-ubyte.gz";
  const IdxArray images = read_idx(images_path, 3);
  const IdxArray labels = read_idx(labels_path, 1);
  if (images.dims[1] != 28 || images.dims[2] != 28)
    throw DatasetError(images_path, "expected 28×28 images, found " + std::to_string(images.dims[1]) + "×" +
                                        std::to_string(images.dims[2]));
  if (images.dims[0] != labels.dims[0])
    throw DatasetError(labels_path, "holds " + std::to_string(labels.dims[0]) + " labels for " +
                                        std::to_string(images.dims[0]) + " images");

  Dataset data;
  data.name = std::string("fashion-mnist/") + (split == Split::Train ? "train" : "test");
  data.num_classes = 10;
  data.channels = 1;
  data.height = 28;
  data.width = 28;
  data.num_features = 28 * 28;
  data.num_samples = static_cast<int>(images.dims[0]);
  if (max_samples > 0 && max_samples < data.num_samples) data.num_samples = max_samples;

  const size_t n = static_cast<size_t>(data.num_samples);
  data.features.resize(n * data.num_features);
  for (size_t i = 0; i < data.features.size(); ++i) data.features[i] = images.bytes[i] / 255.0f;
  data.labels.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (labels.bytes[i] >= data.num_classes)
      throw DatasetError(labels_path, "label " + std::to_string(labels.bytes[i]) + " of sample " +
                                          std::to_string(i) + " is not in 0..9");
    data.labels[i] = labels.bytes[i];
  }
  data.content_hash = dataset_content_hash(data);
  return data;
}

}  // namespace dtsim::models
