// Fixture for the layering.accepts_lower_includes test (headers are checked too). It is never compiled.
#pragma once

#include "sim/config/schema.hpp"
