#include "mixed_precision.hpp"

#include <stdexcept>

namespace dtsim::models {

gpu::NumberFormat parse_number_format(const std::string& text) {
  for (const gpu::NumberFormat f : {gpu::NumberFormat::Fp32, gpu::NumberFormat::Bf16, gpu::NumberFormat::Fp16})
    if (text == gpu::to_string(f)) return f;
  throw std::invalid_argument("unknown number format '" + text + "'; accepted: fp32, bf16, fp16");
}

template <class T>
void make_working_copy(gpu::Ops<T>& ops, const T* master, T* working, size_t n, gpu::NumberFormat format) {
  ops.copy(working, master, n);
  ops.round_to_format(working, n, format);  // a no-op for Fp32
}

template void make_working_copy(gpu::Ops<float>&, const float*, float*, size_t, gpu::NumberFormat);
template void make_working_copy(gpu::Ops<double>&, const double*, double*, size_t, gpu::NumberFormat);

}  // namespace dtsim::models
