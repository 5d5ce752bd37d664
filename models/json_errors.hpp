// Reading JSON files that users write (workload files, partition files): one printable line for a file that
// nlohmann could not parse, for the file:line messages of dtsim's readers, and a parse that notices a member
// given twice.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace dtsim::models {

// nlohmann's message without its exception id ("[json.exception.parse_error.101] parse error at "), so that
// what is left says where and why ("line 1, column 31: syntax error while parsing value - invalid literal;
// last read: '4]]} tra'; expected end of input"); bytes that are not printable ASCII are written as \xNN.
std::string json_error_reason(const nlohmann::json::exception& e);

// Parses `text` as nlohmann::json::parse does (and throws what it throws). An object that names a member twice
// would keep the last value without a word: the first such member's path ("transformer.layers",
// "stages[1].width") is set in `twice`, empty when there is none.
nlohmann::json parse_json_noting_repeats(const std::string& text, std::string& twice);

}  // namespace dtsim::models
