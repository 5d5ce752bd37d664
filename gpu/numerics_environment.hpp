// Everything besides the source code that decides the rounding of dtsim's CPU numerics, pinned to one value
// and described in a fingerprint that every run's summary.json carries.
//
// Two runs with the same fingerprint, scenario and seed write byte-identical metrics.csv and model.bin. The
// fingerprint names: the instruction-set level the binary was compiled for (a fixed x86-64 level, or
// "native" with the build machine's features), the compiler, Eigen's version, the GEMM blocking sizes (Eigen
// would otherwise derive them from the cache sizes it reads off the CPU at run time), the elementary functions
// (gpu/portable_math.hpp rather than the C library's), the floating-point environment and the backend.
// docs/compute.md lists each source of machine-dependent rounding and how it is pinned.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dtsim::gpu {

// The cache sizes Eigen's GEMM blocking heuristic is given instead of the ones it would query (cpuid). Eigen
// splits the inner dimension of a product into blocks of a size derived from L1, which changes the order in
// which each output's sum is accumulated; with these fixed, every CPU accumulates in the same order.
struct GemmBlocking {
  std::ptrdiff_t l1_bytes;
  std::ptrdiff_t l2_bytes;
  std::ptrdiff_t l3_bytes;
};
// Chosen by speed on the development machines (docs/compute.md, "Pinned numerics").
constexpr GemmBlocking kPinnedGemmBlocking{32 * 1024, 1024 * 1024, 32 * 1024 * 1024};

// The SSE control register's settings that change results: flush-to-zero (subnormal results become 0),
// denormals-are-zero (subnormal inputs read as 0) and the rounding direction.
struct FloatingPointEnvironment {
  bool flush_to_zero = false;
  bool denormals_are_zero = false;
  bool round_to_nearest = true;
  bool is_ieee_default() const { return !flush_to_zero && !denormals_are_zero && round_to_nearest; }
};

// The calling thread's environment.
FloatingPointEnvironment current_floating_point_environment();
// "round to nearest, subnormals kept", or what differs from it ("flush-to-zero, denormals-are-zero").
std::string describe(const FloatingPointEnvironment& e);

// Sets the calling thread to IEEE 754's default: round to nearest, subnormals kept (no flush-to-zero, no
// denormals-are-zero), exceptions masked. Threads started afterwards inherit it (SimGrid's actors among
// them), so dtsim calls it first thing in main. Returns the environment it found: a library loaded with the
// process (one built with -ffast-math, say) can have set flush-to-zero before main.
FloatingPointEnvironment pin_floating_point_environment();
// What the first pin found: the environment the process started with (the default before any pin).
FloatingPointEnvironment floating_point_environment_at_start();

// The model name of the CPU this process runs on (/proc/cpuinfo), or "unknown"; for the record, not part of
// the fingerprint: a portable build computes the same bits on any CPU of its level.
std::string running_cpu_model();

struct NumericsFingerprint {
  std::string isa_level;                   // "x86-64-v3", or "native"
  std::vector<std::string> cpu_features;   // the extensions the compiler was allowed to use
  std::string compiler;                    // e.g. "GCC 12.2.0"
  std::string eigen_version;               // e.g. "3.4.0"
  GemmBlocking gemm_blocking{};
  std::string elementary_functions;
  std::string floating_point;
  std::string backend;                     // "cpu", or the CUDA device that computed
  bool native() const { return isa_level == "native"; }
  // 16 hexadecimal digits summarising every field above (FNV-1a over their text).
  std::string id() const;
};

// This binary's fingerprint, for the given backend description.
NumericsFingerprint numerics_fingerprint(const std::string& backend);

}  // namespace dtsim::gpu
