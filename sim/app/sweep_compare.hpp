// `dtsim compare DIR`: a sweep's groups side by side in a text table a person reads (summary.csv is for
// programs): per group of runs (the varied values other than run.seed), each chosen headline number as its mean,
// ± the sample standard deviation over seeds, and the price range beside a cost.
#pragma once

#include <string>
#include <vector>

#include "sim/app/sweep_results.hpp"

namespace dtsim::sim {

// The columns compare shows by default: those of this list that some run has.
std::vector<std::string> default_compare_columns(const std::vector<RunRow>& rows);

// A warning, or "" when there is nothing to warn of: runs set side by side whose numbers were computed with
// different numerics (summary.json's numerics fingerprint: another instruction-set level, a native build, another
// compiler or backend), or some with a fingerprint and some trained without one recorded. Their accuracies can
// then differ by rounding alone.
std::string numerics_mismatch_warning(const std::vector<RunRow>& rows);

// The table; `columns` are headline column names (InputError at --columns for one that is not).
std::string comparison_table(const SweepPlan& plan, const std::vector<RunRow>& rows,
                             const std::vector<std::string>& columns);

}  // namespace dtsim::sim
