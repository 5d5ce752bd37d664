// Fixture for the layering.accepts_lower_includes test: read as if it were in the config layer, this file
// includes only its own layer and those below, which the check must accept. It is never compiled.
#include "sim/config/run_config.hpp"
#include "sim/scenario/keys.hpp"
#include "models/network.hpp"
#include "gpu/backend.hpp"

#include <string>
