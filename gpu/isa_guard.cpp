// Refuses to start on a CPU that lacks an instruction-set extension this binary was compiled to use, with one
// line that says which and how to rebuild, instead of dying of SIGILL at whichever instruction comes first.
//
// It must run before any code compiled for the build's level: a function in .preinit_array runs before the
// executable's constructors (the static initialisers of every other file, which may already use AVX2). Its
// own code must be baseline x86-64: the file is compiled with the build's -march so that gpu/isa_features.hpp
// reads the extensions that level allows off the compiler's macros, and then switches to the baseline
// (#pragma GCC target) for everything after, glibc's inline helpers included (compiled for x86-64-v3 they use
// BMI2's shlx). tests/scripts/isa_guard_test.sh disassembles the check and fails on any newer instruction. glibc's view of the CPU (CPU_FEATURE_ACTIVE) is used rather than cpuid directly because
// it also checks that the kernel saves the wider registers, and because GLIBC_TUNABLES can mask a feature,
// which is how the test (tests/scripts/isa_guard_test.sh) plays a CPU without AVX2.
//
// Linked into every executable as an object library (dtsim_isa_guard): a static library's member that no
// symbol refers to would be dropped by the linker.
// First, while the compiler's macros still describe the build's level.
#include "gpu/isa_features.hpp"

// Everything below, headers included, is compiled for the baseline x86-64.
#pragma GCC target("arch=x86-64")

#include <sys/platform/x86.h>
#include <unistd.h>

#include <cstddef>

#ifndef DTSIM_ISA_LEVEL_NAME
#error "DTSIM_ISA_LEVEL_NAME must be defined by the build (gpu/CMakeLists.txt)"
#endif

namespace {

constexpr std::size_t kMessageCapacity = 1024;

struct Message {
  char text[kMessageCapacity];
  std::size_t length = 0;
};

void append(Message& m, const char* text) {
  while (*text && m.length + 1 < kMessageCapacity) m.text[m.length++] = *text++;
}

}  // namespace

// Named, so that the test can find and disassemble it.
extern "C" __attribute__((used, noinline)) void dtsim_isa_guard_check(int, char**, char**) {
  Message m;
  bool missing = false;
  append(m, "dtsim: this CPU lacks");
#define DTSIM_REQUIRE(glibc_name, name) \
  if (!CPU_FEATURE_ACTIVE(glibc_name)) {  \
    append(m, missing ? ", " : " ");      \
    append(m, name);                      \
    missing = true;                       \
  }
  DTSIM_FOR_EACH_COMPILED_FEATURE(DTSIM_REQUIRE)
#undef DTSIM_REQUIRE
  if (!missing) return;
#ifdef DTSIM_NATIVE_BUILD
  append(m, ", which this -march=native build of another machine uses; rebuild here (make build), or build "
            "the portable default (cmake -DDTSIM_NATIVE=OFF)\n");
#else
  append(m, ", which this " DTSIM_ISA_LEVEL_NAME " build uses; rebuild for an older level (cmake "
            "-DDTSIM_ISA_LEVEL=x86-64-v2), whose results differ from " DTSIM_ISA_LEVEL_NAME " builds' (docs/compute.md)\n");
#endif
  const ssize_t ignored = write(STDERR_FILENO, m.text, m.length);
  (void)ignored;
  _exit(2);
}

namespace {

// The loader calls every pointer in .preinit_array, in order, before the executable's constructors.
__attribute__((section(".preinit_array"), used)) void (*isa_guard_entry)(int, char**, char**) = dtsim_isa_guard_check;

}  // namespace
