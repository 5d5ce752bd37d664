// Fixture for the layering.rejects_a_higher_include test: read as if it were in the config layer, this file
// includes the app layer, which the check must report. It is never compiled.
#include "sim/config/run_config.hpp"
#include "sim/scenario/keys.hpp"
#include "models/network.hpp"
#include "sim/app/run.hpp"
