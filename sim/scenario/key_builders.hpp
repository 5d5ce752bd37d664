// Small builders that keep each entry of a key table (in each sim/config/*_config.cpp) on a few lines.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "sim/scenario/keys.hpp"

namespace dtsim::sim {

namespace key_builders {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

inline Range at_least(double lo) { return {lo, kInf, false, false}; }
inline Range between(double lo, double hi) { return {lo, hi, false, false}; }
inline Range positive(double hi = kInf) { return {0.0, hi, true, false}; }
inline Range fraction_open_closed() { return {0.0, 1.0, true, false}; }  // (0, 1]
inline Range fraction_closed_open() { return {0.0, 1.0, false, true}; }  // [0, 1)

inline KeySpec integer(std::string name, std::string def, Range r, std::string help) {
  KeySpec k;
  k.name = std::move(name);
  k.type = ValueType::Int;
  k.default_text = std::move(def);
  k.range = r;
  k.help = std::move(help);
  return k;
}

inline KeySpec real(std::string name, std::string def, Range r, std::string help) {
  KeySpec k = integer(std::move(name), std::move(def), r, std::move(help));
  k.type = ValueType::Real;
  return k;
}

inline KeySpec boolean(std::string name, std::string def, std::string help) {
  KeySpec k;
  k.name = std::move(name);
  k.type = ValueType::Bool;
  k.default_text = std::move(def);
  k.help = std::move(help);
  return k;
}

inline KeySpec text(std::string name, std::string def, std::string help, bool optional = false) {
  KeySpec k;
  k.name = std::move(name);
  k.type = ValueType::Text;
  k.default_text = std::move(def);
  k.help = std::move(help);
  k.optional = optional;
  return k;
}

inline KeySpec choice(std::string name, std::string def, std::vector<std::string> choices, std::string help) {
  KeySpec k = text(std::move(name), std::move(def), std::move(help));
  k.type = ValueType::Choice;
  k.choices = std::move(choices);
  return k;
}

inline KeySpec quantity(std::string name, Dimension dim, std::string def, Range r, std::string help) {
  KeySpec k = integer(std::move(name), std::move(def), r, std::move(help));
  k.type = ValueType::Quantity;
  k.dim = dim;
  return k;
}

inline KeySpec int_list(std::string name, std::string def, Range element, std::string help) {
  KeySpec k = integer(std::move(name), std::move(def), element, std::move(help));
  k.type = ValueType::IntList;
  k.optional = true;  // an empty list is meaningful (e.g. no hidden layers)
  return k;
}

}  // namespace key_builders
}  // namespace dtsim::sim
