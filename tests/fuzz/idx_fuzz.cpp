// Fuzz target: the IDX reader (models/dataset.hpp parse_fashion_mnist) on arbitrary bytes. Input layout:
// two bytes (little endian) giving the length of the images file, one byte whose value modulo 4 is
// max_samples, the images file, then the labels file. Bad input must be a DatasetError; an accepted
// dataset must be consistent.
#include <algorithm>

#include "models/dataset.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using dtsim::fuzz::finding;
  using namespace dtsim::models;
  if (size < 3) return 0;
  const size_t images_length = std::min<size_t>(data[0] | (size_t(data[1]) << 8), size - 3);
  const int max_samples = data[2] % 4;
  const char* rest = reinterpret_cast<const char*>(data + 3);
  const std::string images(rest, images_length);
  const std::string labels(rest + images_length, size - 3 - images_length);
  try {
    const Dataset d = parse_fashion_mnist(images, labels, "images", "labels", Split::Test, max_samples);
    if (d.num_samples <= 0 || (max_samples > 0 && d.num_samples > max_samples)) finding("bad sample count");
    if (d.features.size() != size_t(d.num_samples) * 784 || d.labels.size() != size_t(d.num_samples))
      finding("features or labels of the wrong size");
    for (const int32_t label : d.labels)
      if (label < 0 || label > 9) finding("label out of range");
    for (const float x : d.features)
      if (!(x >= 0.0f && x <= 1.0f)) finding("pixel outside [0, 1]");
    dtsim::fuzz::last_outcome() = dtsim::fuzz::Outcome::Accepted;
  } catch (const DatasetError&) {
    dtsim::fuzz::last_outcome() = dtsim::fuzz::Outcome::Refused;
  }
  return 0;
}
