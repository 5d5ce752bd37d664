// `dtsim keys [--format text|markdown]`: the scenario schema as an aligned text table, or as the Markdown page
// docs/keys.md (generated, so that the documented keys cannot drift from the ones the parser accepts).
#pragma once

#include <cstdio>
#include <string>

#include "models/name_table.hpp"

namespace dtsim::sim {

enum class KeysFormat { Text, Markdown };

const models::NameTable<KeysFormat>& keys_format_table();  // "text", "markdown"

// The format named by --format; an InputError naming the flag and the valid values otherwise.
KeysFormat parse_keys_format(const std::string& text);

// The Markdown page: a generated-file notice, then one table per section in schema order.
std::string keys_markdown();

// Prints every key to `out` in `format`; returns the exit status (0).
int command_keys(KeysFormat format, std::FILE* out = stdout);

}  // namespace dtsim::sim
