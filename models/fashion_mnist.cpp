// Reader for the IDX format of (Fashion-)MNIST: the .gz files are decompressed through zlib, then parsed in
// memory, so that the parser can be tested (and fuzzed) on bytes without files.
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

#include <array>
#include <cstdio>
#include <memory>

#include "dataset.hpp"
#include "models/input_file.hpp"

namespace dtsim::models {
namespace {

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

// An IDX array inside the bytes it was parsed from.
struct IdxView {
  std::vector<uint32_t> dims;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

uint32_t big_endian(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

// The whole decompressed content of a gzip file (a file that is not gzip'ed is read as it is). Stops with a
// DatasetError once it exceeds what an IDX file may hold, so that a small file cannot fill the memory.
std::string read_gzip(const std::string& path) {
  // A FIFO or a device would block gzopen or read for ever: only a regular file is opened (input_file.hpp).
  InputFileProblem problem;
  const int fd = open_input_file(path, problem);
  if (problem.kind == InputFileProblem::Kind::Missing)
    throw DatasetError(path, "no such file (the folder must hold the four .gz files of dataset-fashion-mnist)");
  if (fd < 0) throw DatasetError(path, problem.reason);
  GzFile f(gzdopen(fd, "rb"));
  if (!f) {
    ::close(fd);
    throw DatasetError(path, std::string("cannot read: ") + std::strerror(errno ? errno : EIO));
  }
  constexpr size_t kMaxFileBytes = kMaxIdxBytes + 4 + 4 * 255;  // the payload, the magic and 255 dimensions
  std::string content;
  std::array<char, 1 << 16> chunk{};
  while (true) {
    const int got = gzread(f.get(), chunk.data(), static_cast<unsigned>(chunk.size()));
    if (got <= 0) break;  // the end, or an error that gzerror reports below
    if (content.size() + static_cast<size_t>(got) > kMaxFileBytes)
      throw DatasetError(path, "decompresses to more than 1 GiB, more than an IDX file may hold");
    content.append(chunk.data(), static_cast<size_t>(got));
  }
  int errnum = Z_OK;
  const char* msg = gzerror(f.get(), &errnum);
  if (errnum != Z_OK && errnum != Z_STREAM_END) {
    // zlib names a file opened by descriptor "<fd:N>": its message names the path instead.
    std::string why = msg ? msg : "";
    if (why.rfind("<fd:", 0) == 0 && why.find(">: ") != std::string::npos) why = path + why.substr(why.find(">: ") + 1);
    throw DatasetError(path, std::string("truncated or corrupt gzip data") + (why.empty() ? "" : " (" + why + ")"));
  }
  return content;
}

// IDX: magic 0x0000 <type> <ndims>, then ndims big-endian uint32 sizes, then the data. We accept unsigned
// bytes (type 0x08) only, which is what (Fashion-)MNIST uses. The sizes are checked, without overflow,
// against kMaxIdxBytes and against the bytes that follow the header.
IdxView parse_idx(const std::string& bytes, size_t expected_ndims, const std::string& name) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t header = 4 + 4 * expected_ndims;
  if (bytes.size() < 4)
    throw DatasetError(name, "truncated in the header (" + std::to_string(bytes.size()) + " bytes)");
  if (p[0] != 0 || p[1] != 0 || p[2] != 0x08)
    throw DatasetError(name, "not an IDX file of unsigned bytes (bad magic number)");
  if (p[3] != expected_ndims)
    throw DatasetError(name, "expected " + std::to_string(expected_ndims) + " dimensions, found " + std::to_string(p[3]));
  if (bytes.size() < header)
    throw DatasetError(name, "truncated in the header (" + std::to_string(bytes.size()) + " bytes, " +
                                 std::to_string(header) + " expected)");
  IdxView arr;
  size_t total = 1;
  for (size_t d = 0; d < expected_ndims; ++d) {
    const uint32_t dim = big_endian(p + 4 + 4 * d);
    arr.dims.push_back(dim);
    if (dim == 0 || total > kMaxIdxBytes / dim)
      throw DatasetError(name, "implausible array size in header (dimension " + std::to_string(d) + " is " +
                                   std::to_string(dim) + "; at most 1 GiB of data is accepted)");
    total *= dim;
  }
  const size_t present = bytes.size() - header;
  if (present < total)
    throw DatasetError(name, "truncated: the header declares " + std::to_string(total) + " bytes of data, " +
                                 std::to_string(present) + " follow");
  if (present > total) throw DatasetError(name, "has trailing bytes after the declared data");
  arr.data = p + header;
  arr.size = total;
  return arr;
}

}  // namespace

Dataset parse_fashion_mnist(const std::string& images_idx, const std::string& labels_idx,
                            const std::string& images_name, const std::string& labels_name, Split split,
                            int max_samples) {
  const IdxView images = parse_idx(images_idx, 3, images_name);
  const IdxView labels = parse_idx(labels_idx, 1, labels_name);
  if (images.dims[1] != 28 || images.dims[2] != 28)
    throw DatasetError(images_name, "expected 28×28 images, found " + std::to_string(images.dims[1]) + "×" +
                                        std::to_string(images.dims[2]));
  if (images.dims[0] != labels.dims[0])
    throw DatasetError(labels_name, "holds " + std::to_string(labels.dims[0]) + " labels for " +
                                        std::to_string(images.dims[0]) + " images");

  Dataset data;
  data.name = std::string("fashion-mnist/") + (split == Split::Train ? "train" : "test");
  data.num_classes = 10;
  data.channels = 1;
  data.height = 28;
  data.width = 28;
  data.num_features = 28 * 28;
  // At most kMaxIdxBytes / 784 images, so the count fits an int.
  data.num_samples = static_cast<int>(images.dims[0]);
  if (max_samples > 0 && max_samples < data.num_samples) data.num_samples = max_samples;

  const size_t n = static_cast<size_t>(data.num_samples);
  data.features.resize(n * data.num_features);
  for (size_t i = 0; i < data.features.size(); ++i) data.features[i] = images.data[i] / 255.0f;
  data.labels.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (labels.data[i] >= data.num_classes)
      throw DatasetError(labels_name, "label " + std::to_string(labels.data[i]) + " of sample " +
                                          std::to_string(i) + " is not in 0..9");
    data.labels[i] = labels.data[i];
  }
  data.content_hash = dataset_content_hash(data);
  return data;
}

Dataset load_fashion_mnist(const std::string& directory, Split split, int max_samples) {
  const std::string prefix = directory + "/" + (split == Split::Train ? "train" : "t10k");
  const std::string images_path = prefix + "-images-idx3-ubyte.gz";
  const std::string labels_path = prefix + "-labels-idx1-ubyte.gz";
  const std::string images = read_gzip(images_path);
  const std::string labels = read_gzip(labels_path);
  return parse_fashion_mnist(images, labels, images_path, labels_path, split, max_samples);
}

}  // namespace dtsim::models
