#include "staleness.hpp"

#include <cmath>
#include <stdexcept>

namespace dtsim::models {

StalenessRule parse_staleness_rule(const std::string& text) {
  if (text == "none") return StalenessRule::None;
  if (text == "inverse") return StalenessRule::Inverse;
  if (text == "polynomial") return StalenessRule::Polynomial;
  if (text == "hinge") return StalenessRule::Hinge;
  throw std::invalid_argument("unknown staleness rule '" + text + "' (none, inverse, polynomial, hinge)");
}

const char* to_string(StalenessRule rule) {
  switch (rule) {
    case StalenessRule::None: return "none";
    case StalenessRule::Inverse: return "inverse";
    case StalenessRule::Polynomial: return "polynomial";
    case StalenessRule::Hinge: return "hinge";
  }
  return "?";
}

double staleness_lr_factor(StalenessRule rule, int64_t staleness, double exponent, double threshold) {
  if (staleness < 0) throw std::invalid_argument("staleness cannot be negative");
  const double s = static_cast<double>(staleness);
  switch (rule) {
    case StalenessRule::None: return 1.0;
    case StalenessRule::Inverse: return staleness == 0 ? 1.0 : 1.0 / s;
    case StalenessRule::Polynomial: return std::pow(1.0 + s, -exponent);
    case StalenessRule::Hinge: return s <= threshold ? 1.0 : 1.0 / (exponent * (s - threshold) + 1.0);
  }
  return 1.0;
}

}  // namespace dtsim::models
