#include "mixed_precision.hpp"

#include <stdexcept>

namespace dtsim::models {

const NameTable<gpu::NumberFormat>& number_format_table() {
  static const NameTable<gpu::NumberFormat> table = [] {
    std::vector<NameTable<gpu::NumberFormat>::Entry> entries;
    for (const gpu::NumberFormat f : {gpu::NumberFormat::Fp32, gpu::NumberFormat::Bf16, gpu::NumberFormat::Fp16})
      entries.push_back({f, gpu::to_string(f)});
    return NameTable<gpu::NumberFormat>(std::move(entries));
  }();
  return table;
}

std::vector<std::string> number_format_names() { return number_format_table().names(); }

gpu::NumberFormat parse_number_format(const std::string& text) {
  if (const auto f = number_format_table().parse(text)) return *f;
  throw std::invalid_argument("unknown number format '" + text + "'; accepted: " + number_format_table().comma_list());
}

template <class T>
void make_working_copy(gpu::Ops<T>& ops, const T* master, T* working, size_t n, gpu::NumberFormat format) {
  ops.copy(working, master, n);
  ops.round_to_format(working, n, format);  // a no-op for Fp32
}

template void make_working_copy(gpu::Ops<float>&, const float*, float*, size_t, gpu::NumberFormat);
template void make_working_copy(gpu::Ops<double>&, const double*, double*, size_t, gpu::NumberFormat);

}  // namespace dtsim::models
