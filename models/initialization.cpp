#include "models/initialization.hpp"

#include <cmath>
#include <stdexcept>

namespace dtsim::models {

const NameTable<InitScheme>& init_scheme_table() {
  static const NameTable<InitScheme> table{{InitScheme::HeUniform, "he-uniform"},
                                           {InitScheme::TorchDefault, "torch-default"}};
  return table;
}

std::vector<std::string> init_scheme_names() { return init_scheme_table().names(); }

const char* to_string(InitScheme scheme) { return init_scheme_table().name(scheme); }

UniformInitBounds uniform_init_bounds(InitScheme scheme, double fan_in) {
  if (!(fan_in >= 1.0)) throw std::invalid_argument("a layer's fan-in must be at least 1");
  switch (scheme) {
    case InitScheme::HeUniform:
      return {std::sqrt(6.0 / fan_in), 0.0};
    case InitScheme::TorchDefault: {
      const double bound = 1.0 / std::sqrt(fan_in);
      return {bound, bound};
    }
  }
  throw std::logic_error("unknown initialisation scheme");
}

}  // namespace dtsim::models
