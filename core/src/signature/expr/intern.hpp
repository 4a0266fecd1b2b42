// Process-lifetime storage for the strings compiled expressions refer to (string literals,
// type family case values), so that a Val may view them without owning them.
#pragma once

#include <string_view>

namespace tileops::expr {

// A view of a process-lifetime copy of `s` (equal strings share one copy). Thread-safe.
std::string_view intern(std::string_view s);

}  // namespace tileops::expr
