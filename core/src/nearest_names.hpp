// Suggestions for a misspelt name: the known names closest to it by edit distance. Internal;
// the tests compile their own copy.
#pragma once

#include <string>
#include <string_view>
#include <vector>


namespace tileops {

// The number of single-character insertions, deletions and substitutions (compared without
// regard to ASCII case) that turn `a` into `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

// Up to `limit` names of `known` within edit distance max(2, |name| / 3) of `name`, closest
// first (ties in `known`'s order). `name` itself is never suggested.
std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& known,
                                       std::size_t limit = 3);

// " (did you mean 'A' or 'B'?)" for the names nearest_names finds; "" when there are none.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& known);

}  // namespace tileops
