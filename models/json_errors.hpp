// One printable line for a JSON file that nlohmann could not parse, for the file:line messages of dtsim's
// readers (workload files, partition files).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace dtsim::models {

// nlohmann's message without its exception id ("[json.exception.parse_error.101] parse error at "), so that
// what is left says where and why ("line 1, column 31: syntax error while parsing value - invalid literal;
// last read: '4]]} tra'; expected end of input"); bytes that are not printable ASCII are written as \xNN.
std::string json_error_reason(const nlohmann::json::exception& e);

}  // namespace dtsim::models
