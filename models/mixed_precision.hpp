// Mixed-precision policy (Micikevicius et al. 2018): the optimizer keeps fp32 master weights, and each
// step's forward and backward passes use a working copy rounded to the weights' storage format; activations
// and gradients are rounded to theirs. Storage is emulated: values stay in T, rounded with
// Ops::round_to_format, so an fp32 run and a bf16 run differ exactly by the rounding.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gpu/number_format.hpp"
#include "gpu/ops.hpp"
#include "models/name_table.hpp"

namespace dtsim::models {

struct PrecisionSettings {
  gpu::NumberFormat weights = gpu::NumberFormat::Fp32;      // the working copy used by forward/backward
  gpu::NumberFormat activations = gpu::NumberFormat::Fp32;
  gpu::NumberFormat gradients = gpu::NumberFormat::Fp32;
};

// "fp32" | "bf16" | "fp16"; throws std::invalid_argument naming the accepted values.
gpu::NumberFormat parse_number_format(const std::string& text);
// The formats a run may choose, in this order, named by gpu::to_string (which holds the spelling).
const NameTable<gpu::NumberFormat>& number_format_table();
std::vector<std::string> number_format_names();

// working (overwrites, n values) = master rounded to `format`; both in backend memory and not overlapping.
// With Fp32 it is a plain copy.
template <class T>
void make_working_copy(gpu::Ops<T>& ops, const T* master, T* working, size_t n, gpu::NumberFormat format);

}  // namespace dtsim::models
