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

// The table; `columns` are headline column names (InputError at --columns for one that is not).
std::string comparison_table(const SweepPlan& plan, const std::vector<RunRow>& rows,
                             const std::vector<std::string>& columns);

}  // namespace dtsim::sim
