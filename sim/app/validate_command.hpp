// `dtsim validate [--quick]`: runs the claim checks of validate_claims.hpp as 'dtsim run' processes and prints
// one PASS or FAIL line per claim with its numbers and margin.
#pragma once

namespace dtsim::sim {

// argv[0] is "validate". Exit status: 0 when every claim passes, 1 when one fails or a run left no result,
// 2 bad input, 128 + signal when stopped.
int command_validate(int argc, char** argv);

}  // namespace dtsim::sim
