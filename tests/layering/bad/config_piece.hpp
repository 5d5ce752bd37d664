// Fixture for the layering.rejects_a_higher_include test (headers are checked too): the config layer must not
// include the world layer. It is never compiled.
#pragma once

#include "sim/config/schema.hpp"
#include "sim/world/platform.hpp"
