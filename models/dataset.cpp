#include "dataset.hpp"

#include <zlib.h>

#include <cstdio>

namespace dtsim::models {

std::string dataset_content_hash(const Dataset& data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32_z(crc, reinterpret_cast<const Bytef*>(data.features.data()), data.features.size() * sizeof(float));
  crc = crc32_z(crc, reinterpret_cast<const Bytef*>(data.labels.data()), data.labels.size() * sizeof(int32_t));
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08lx", static_cast<unsigned long>(crc));
  return std::string("crc32:") + buf;
}

template <class T>
void gather_batch(const Dataset& data, const int32_t* indices, int count, T* features_out, int32_t* labels_out) {
  const int d = data.num_features;
  for (int b = 0; b < count; ++b) {
    const float* src = data.sample(indices[b]);
    T* dst = features_out + static_cast<size_t>(b) * d;
    for (int j = 0; j < d; ++j) dst[j] = static_cast<T>(src[j]);
    labels_out[b] = data.labels[indices[b]];
  }
}

template void gather_batch<float>(const Dataset&, const int32_t*, int, float*, int32_t*);
template void gather_batch<double>(const Dataset&, const int32_t*, int, double*, int32_t*);

}  // namespace dtsim::models
