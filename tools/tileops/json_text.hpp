// JSON output of the subcommands.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tileops::cli {

// `value` as JSON text indented by two spaces. Strings that are not valid UTF-8 (a path, a
// plugin's message) have their bad bytes replaced instead of failing the dump.
inline std::string json_text(const nlohmann::json& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tileops::cli
