#include "gpu/numerics_environment.hpp"

#include <Eigen/Core>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <xmmintrin.h>

#include "gpu/isa_features.hpp"

#ifndef DTSIM_ISA_LEVEL_NAME
#error "DTSIM_ISA_LEVEL_NAME must be defined by the build (gpu/CMakeLists.txt)"
#endif

namespace dtsim::gpu {
namespace {

// MXCSR's bits (Intel SDM vol. 1, 10.2.3).
constexpr unsigned kFlushToZero = 1u << 15;
constexpr unsigned kDenormalsAreZero = 1u << 6;
constexpr unsigned kRoundingControl = 3u << 13;  // 00 = round to nearest
constexpr unsigned kExceptionMasks = 0x3fu << 7;

std::string compiler_name() {
#if defined(__clang__)
  return "Clang " __clang_version__;
#elif defined(__GNUC__)
  return "GCC " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
         std::to_string(__GNUC_PATCHLEVEL__);
#else
  return "unknown compiler";
#endif
}

FloatingPointEnvironment& environment_at_start() {
  static FloatingPointEnvironment found;
  return found;
}

}  // namespace

FloatingPointEnvironment current_floating_point_environment() {
  const unsigned csr = _mm_getcsr();
  FloatingPointEnvironment e;
  e.flush_to_zero = (csr & kFlushToZero) != 0;
  e.denormals_are_zero = (csr & kDenormalsAreZero) != 0;
  e.round_to_nearest = (csr & kRoundingControl) == 0;
  return e;
}

std::string describe(const FloatingPointEnvironment& e) {
  if (e.is_ieee_default()) return "round to nearest, subnormals kept";
  std::string text;
  const auto add = [&text](const char* what) { text += (text.empty() ? "" : ", ") + std::string(what); };
  if (!e.round_to_nearest) add("directed rounding");
  if (e.flush_to_zero) add("flush-to-zero");
  if (e.denormals_are_zero) add("denormals-are-zero");
  return text;
}

FloatingPointEnvironment pin_floating_point_environment() {
  const FloatingPointEnvironment found = current_floating_point_environment();
  static std::once_flag first;
  std::call_once(first, [&found] { environment_at_start() = found; });
  unsigned csr = _mm_getcsr();
  csr &= ~(kFlushToZero | kDenormalsAreZero | kRoundingControl);
  csr |= kExceptionMasks;
  _mm_setcsr(csr);
  return found;
}

FloatingPointEnvironment floating_point_environment_at_start() { return environment_at_start(); }

std::string running_cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
  }
  return "unknown";
}

std::string NumericsFingerprint::id() const {
  std::string text = isa_level;
  for (const std::string& f : cpu_features) text += " " + f;
  text += "|" + compiler + "|" + eigen_version + "|" + std::to_string(gemm_blocking.l1_bytes) + "," +
          std::to_string(gemm_blocking.l2_bytes) + "," + std::to_string(gemm_blocking.l3_bytes) + "|" +
          elementary_functions + "|" + floating_point + "|" + backend;
  uint64_t hash = 1469598103934665603ull;  // FNV-1a, 64 bits
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  static const char* const kDigits = "0123456789abcdef";
  std::string hex(16, '0');
  for (int i = 15; i >= 0; --i, hash >>= 4) hex[static_cast<size_t>(i)] = kDigits[hash & 0xf];
  return hex;
}

NumericsFingerprint numerics_fingerprint(const std::string& backend) {
  NumericsFingerprint f;
  f.isa_level = DTSIM_ISA_LEVEL_NAME;
#define DTSIM_LIST_FEATURE(glibc_name, name) f.cpu_features.push_back(name);
  DTSIM_FOR_EACH_COMPILED_FEATURE(DTSIM_LIST_FEATURE)
#undef DTSIM_LIST_FEATURE
  f.compiler = compiler_name();
  f.eigen_version = std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                    std::to_string(EIGEN_MINOR_VERSION);
  f.gemm_blocking = kPinnedGemmBlocking;
  f.elementary_functions = "dtsim portable (gpu/portable_math.cpp)";
  f.floating_point = "IEEE 754 round to nearest, subnormals kept (no FTZ, no DAZ)";
  f.backend = backend;
  return f;
}

}  // namespace dtsim::gpu
