// Lists in messages: "a, b, c".
#pragma once

#include <cstddef>
#include <iterator>
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

// The first `listed` items joined, then " and N more" for the rest: a list in a message whose
// length the input decides.
template <class Range>
std::string join_first(const Range& items, std::size_t listed) {
  std::string s;
  std::size_t n = 0;
  for (const auto& item : items) {
    if (n == listed) break;
    if (n++ > 0) s += ", ";
    s += item;
  }
  const auto total = static_cast<std::size_t>(std::distance(std::begin(items), std::end(items)));
  if (total > listed) s += " and " + std::to_string(total - listed) + " more";
  return s;
}

// `list`, or "(none)" when it is empty.
inline std::string or_none(std::string list) { return list.empty() ? "(none)" : list; }

}  // namespace tileops
