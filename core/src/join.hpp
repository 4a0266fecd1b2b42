// Lists in messages: "a, b, c".
#pragma once

#include <string>
#include <string_view>

namespace tileops {

// The items, each written with `write(std::string&, item)`, separated by `separator`.
template <class Range, class Write>
std::string join_with(const Range& items, Write write, std::string_view separator = ", ") {
  std::string s;
  bool first = true;
  for (const auto& item : items) {
    if (!first) s += separator;
    first = false;
    write(s, item);
  }
  return s;
}

// The items (anything a std::string can be appended), separated by `separator`.
template <class Range>
std::string join(const Range& items, std::string_view separator = ", ") {
  return join_with(items, [](std::string& s, const auto& item) { s += item; }, separator);
}

// `list`, or "(none)" when it is empty.
inline std::string or_none(std::string list) { return list.empty() ? "(none)" : list; }

}  // namespace tileops
