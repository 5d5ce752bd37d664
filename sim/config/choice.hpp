// Reading a choice key into its enum through the enum's one name table.
#pragma once

#include <string>

#include "models/name_table.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/text.hpp"

namespace dtsim::sim {

// The schema has already refused anything but the key's choices, so a miss here means the key's list of
// choices and the table disagree: reported at the key all the same, never assumed away.
template <class Enum>
Enum choice_value(const models::NameTable<Enum>& table, const Scenario& s, const std::string& key) {
  if (const auto value = table.parse(trim(s.text(key)))) return *value;
  s.fail(key, "'" + s.text(key) + "' is not one of " + table.or_list());
}

}  // namespace dtsim::sim
