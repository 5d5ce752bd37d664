#include "staleness.hpp"

#include <cmath>
#include <stdexcept>

#include "gpu/portable_math.hpp"

namespace dtsim::models {

const NameTable<StalenessRule>& staleness_rule_table() {
  static const NameTable<StalenessRule> table{{StalenessRule::None, "none"},
                                              {StalenessRule::Inverse, "inverse"},
                                              {StalenessRule::Polynomial, "polynomial"},
                                              {StalenessRule::Hinge, "hinge"}};
  return table;
}

std::vector<std::string> staleness_rule_names() { return staleness_rule_table().names(); }

StalenessRule parse_staleness_rule(const std::string& text) {
  if (const auto rule = staleness_rule_table().parse(text)) return *rule;
  throw std::invalid_argument("unknown staleness rule '" + text + "' (" + staleness_rule_table().comma_list() + ")");
}

const char* to_string(StalenessRule rule) { return staleness_rule_table().name(rule); }

double staleness_lr_factor(StalenessRule rule, int64_t staleness, double exponent, double threshold) {
  if (staleness < 0) throw std::invalid_argument("staleness cannot be negative");
  const double s = static_cast<double>(staleness);
  switch (rule) {
    case StalenessRule::None: return 1.0;
    case StalenessRule::Inverse: return staleness == 0 ? 1.0 : 1.0 / s;
    case StalenessRule::Polynomial: return portable::pow(1.0 + s, -exponent);
    case StalenessRule::Hinge: return s <= threshold ? 1.0 : 1.0 / (exponent * (s - threshold) + 1.0);
  }
  return 1.0;
}

}  // namespace dtsim::models
