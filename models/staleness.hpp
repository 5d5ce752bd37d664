// How much an asynchronously applied gradient counts, given its staleness s (the number of updates applied
// between the pull its computation started from and its own application).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/name_table.hpp"

namespace dtsim::models {

enum class StalenessRule {
  None,        // factor 1
  Inverse,     // 1/s for s ≥ 1, 1 for s = 0 (Zhang, Gupta, Lian, Liu 2016: lr divided by the staleness)
  Polynomial,  // (1 + s)^−a (as FLSim's polynomial staleness weight)
  Hinge,       // 1 for s ≤ b, else 1 / (a·(s − b) + 1) (as FLSim's hinge staleness weight)
};

StalenessRule parse_staleness_rule(const std::string& text);  // "none" | "inverse" | "polynomial" | "hinge"
const char* to_string(StalenessRule rule);
const NameTable<StalenessRule>& staleness_rule_table();  // the one list of the names above
std::vector<std::string> staleness_rule_names();         // in table order

// The factor the learning rate is multiplied by. `exponent` is a (polynomial, hinge slope), `threshold` b.
double staleness_lr_factor(StalenessRule rule, int64_t staleness, double exponent, double threshold);

}  // namespace dtsim::models
