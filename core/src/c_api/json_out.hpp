// JSON handed to a C caller.
#pragma once

#include <nlohmann/json.hpp>

#include "c_api/handles.hpp"

namespace tileops::c_api {

// `value` as compact JSON text in `*out`, released by tileops_string_free; bytes that are not
// UTF-8 (a path, a plugin's message) are replaced rather than failing.
inline void write_json(const nlohmann::json& value, char** out) {
  *out = owned_string(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace tileops::c_api
