// Fuzz target: a workload catalog file (models/workload/catalog.hpp parse_workload) on arbitrary bytes. Bad
// input must be a WorkloadFileError with a message safe to print; an accepted workload must be consistent
// (weights, FLOPs and kept bytes finite and not negative, trained weights among the weights).
#include <cmath>
#include <string>

#include "models/workload/catalog.hpp"
#include "sim/scenario/units.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using dtsim::fuzz::finding;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const dtsim::models::Workload w = dtsim::models::parse_workload(text, "fuzz.json");
    if (w.layers.empty() || w.parameters() == 0) finding("a workload without layers or weights");
    if (w.trainable() > w.parameters()) finding("more trained weights than weights");
    const double figures[] = {w.forward_flops(), w.backward_flops(), w.saved_bytes(2), w.saved_bytes(2, true),
                              w.recompute_flops()};
    for (const double f : figures)
      if (!std::isfinite(f) || f < 0) finding("a figure that is negative or not finite");
    for (const int i : w.gradient_ready_order())
      if (i < 0 || i >= static_cast<int>(w.layers.size()) || w.layers[i].trainable == 0)
        finding("a gradient-ready index that is not a trained layer");
    dtsim::fuzz::last_outcome() = dtsim::fuzz::Outcome::Accepted;
  } catch (const dtsim::models::WorkloadFileError& e) {
    dtsim::fuzz::check_message(e.what(), [](std::string_view m) { return dtsim::sim::find_unprintable(m); });
    dtsim::fuzz::last_outcome() = dtsim::fuzz::Outcome::Refused;
  }
  return 0;
}
