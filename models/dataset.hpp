// In-memory labelled datasets and the readers that fill them. Pure data: no notion of workers or time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace dtsim::models {

struct Dataset {
  std::string name;
  int num_samples = 0;
  int num_features = 0;
  int num_classes = 0;
  // Image geometry for convolutional models; tabular data uses channels = height = 1, width = features.
  int channels = 1;
  int height = 1;
  int width = 0;
  std::vector<float> features;  // row-major, num_samples × num_features
  std::vector<int32_t> labels;  // num_samples values in [0, num_classes)
  std::string content_hash;     // crc32 of the decoded features and labels, "crc32:xxxxxxxx"

  const float* sample(int i) const { return features.data() + static_cast<size_t>(i) * num_features; }
};

// A dataset file that is missing, truncated or not in the expected format. `path` names the file.
class DatasetError : public std::runtime_error {
 public:
  DatasetError(std::string path, const std::string& reason)
      : std::runtime_error(path + ": " + reason), path_(std::move(path)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

enum class Split { Train, Test };

// Fashion-MNIST from the gzip'ed IDX files of Debian's dataset-fashion-mnist package (or any folder holding
// {train,t10k}-{images-idx3,labels-idx1}-ubyte.gz). Pixels are scaled to [0, 1]. `max_samples` > 0 keeps
// only the first max_samples samples of the split. Each file is decompressed whole (at most
// kMaxIdxBytes plus its header) and handed to parse_fashion_mnist.
Dataset load_fashion_mnist(const std::string& directory, Split split, int max_samples = 0);

// The largest IDX payload accepted, 1 GiB: 20 times the Fashion-MNIST training images.
constexpr size_t kMaxIdxBytes = size_t(1) << 30;

// The same from the two files' decompressed bytes, held in memory; `images_name` and `labels_name` stand for
// the files in errors. Every malformed input (bad magic, wrong number of dimensions, a dimension of zero, a
// payload over kMaxIdxBytes, fewer or more bytes than the header declares, images other than 28×28, counts
// that differ, a label above 9) is a DatasetError; the header's sizes are checked against the bytes present
// before anything is allocated.
Dataset parse_fashion_mnist(const std::string& images_idx, const std::string& labels_idx,
                            const std::string& images_name, const std::string& labels_name, Split split,
                            int max_samples = 0);

// Computes the crc32 content hash of a dataset's features and labels.
std::string dataset_content_hash(const Dataset& data);

// Copies the samples `indices[0..count)` into a dense batch (features converted to T) and their labels.
template <class T>
void gather_batch(const Dataset& data, const int32_t* indices, int count, T* features_out, int32_t* labels_out);

}  // namespace dtsim::models
