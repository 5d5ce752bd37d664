// The one place where the textual names of an enum are written and compared. Each enum that has names keeps
// exactly one NameTable; its parse_…(), to_string() and …_names() are derived from it, so that a name is never
// spelt or compared anywhere else.
//
//   const NameTable<Colour>& colours() {
//     static const NameTable<Colour> table{{Colour::Red, "red"}, {Colour::Green, "green"}};
//     return table;
//   }
//   colours().parse("green")   → Colour::Green        colours().parse("blue") → nullopt
//   colours().name(Colour::Red) → "red"               colours().names()       → {"red", "green"}
//   colours().or_list()         → "red or green"       colours().comma_list()  → "red, green"
//
// Names must be string literals (or otherwise outlive the table): the table keeps the pointers. A table with a
// repeated name or a repeated value is a programming error and throws std::logic_error when it is built.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dtsim::models {

// "a", "a or b", "a, b or c" (with last_separator " or "); "a, b, c" with last_separator ", ".
inline std::string join_names(const std::vector<std::string>& names, std::string_view separator = ", ",
                              std::string_view last_separator = " or ") {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? last_separator : separator;
    text += names[i];
  }
  return text;
}

template <class Enum>
class NameTable {
 public:
  struct Entry {
    Enum value;
    const char* name;
  };

  NameTable(std::initializer_list<Entry> entries) : NameTable(std::vector<Entry>(entries)) {}
  explicit NameTable(std::vector<Entry> entries) : entries_(std::move(entries)) {
    for (size_t i = 0; i < entries_.size(); ++i)
      for (size_t j = 0; j < i; ++j) {
        if (entries_[i].value == entries_[j].value)
          throw std::logic_error(std::string("name table: '") + entries_[i].name + "' and '" + entries_[j].name +
                                 "' name the same value");
        if (std::string_view(entries_[i].name) == entries_[j].name)
          throw std::logic_error(std::string("name table: '") + entries_[i].name + "' names two values");
      }
  }

  // The value called `text` (exact, case-sensitive match), or nullopt.
  std::optional<Enum> parse(std::string_view text) const {
    for (const Entry& e : entries_)
      if (text == e.name) return e.value;
    return std::nullopt;
  }

  // The value's name; "?" for a value the table does not hold.
  const char* name(Enum value) const {
    for (const Entry& e : entries_)
      if (e.value == value) return e.name;
    return "?";
  }

  bool contains(Enum value) const {
    for (const Entry& e : entries_)
      if (e.value == value) return true;
    return false;
  }

  // Every name, in table order: a key's list of choices.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(entries_.size());
    for (const Entry& e : entries_) out.emplace_back(e.name);
    return out;
  }

  // Every value, in table order.
  std::vector<Enum> values() const {
    std::vector<Enum> out;
    out.reserve(entries_.size());
    for (const Entry& e : entries_) out.push_back(e.value);
    return out;
  }

  size_t size() const { return entries_.size(); }
  const std::vector<Entry>& entries() const { return entries_; }

  // "a, b or c", for "expected …" in error messages.
  std::string or_list() const { return join_names(names(), ", ", " or "); }
  // "a, b, c", for "accepted: …".
  std::string comma_list() const { return join_names(names(), ", ", ", "); }

 private:
  std::vector<Entry> entries_;
};

}  // namespace dtsim::models
