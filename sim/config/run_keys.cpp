// Scenario keys: the run itself, evaluation and outputs.
#include "sim/config/schema.hpp"
#include "sim/scenario/key_builders.hpp"

namespace dtsim::sim {

using namespace key_builders;

void add_run_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      // ---- run ------------------------------------------------------------------------------------------
      text("run.name", "", "Run name used in outputs; defaults to the scenario file name without .ini", true),
      integer("run.seed", "1", between(0, 1e15),
              "Seed of every random stream (data order, initialisation, stragglers, sampling)"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

void add_output_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      // ---- evaluation and output --------------------------------------------------------------------------
      real("eval.target_accuracy", "0", between(0, 1),
           "Report the simulated time and cost at which test accuracy first reaches this value; 0 = none"),
      integer("eval.per_epoch", "2", between(1, 100000),
              "Test-set evaluations per epoch (plus one before training); evaluation costs no simulated time"),
      boolean("output.save_model", "false", "Write the final parameters to model.bin (float32, little-endian)"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
