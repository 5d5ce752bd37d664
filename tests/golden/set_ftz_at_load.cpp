// A library that, like one built with -ffast-math, sets flush-to-zero and denormals-are-zero when it is loaded.
// golden.sh preloads it into dtsim: the run's bits must not change, because dtsim pins the floating-point
// environment first thing in main (gpu/numerics_environment.hpp).
#include <xmmintrin.h>

__attribute__((constructor)) static void set_flush_to_zero_at_load() {
  _mm_setcsr(_mm_getcsr() | (1u << 15) | (1u << 6));
}
