#include "gpu/numerics_environment.hpp"
#include "sim/app/cli.hpp"

int main(int argc, char** argv) {
  // Before anything computes or starts a thread: every thread after this one inherits the pinned rounding.
  dtsim::gpu::pin_floating_point_environment();
  return dtsim::sim::dtsim_main(argc, argv);
}
