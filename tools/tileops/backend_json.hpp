// JSON views of the loaded backends, shared by `info`, `plugins` and `targets`.
#pragma once

#include <nlohmann/json.hpp>

namespace tileops::cli {

// [{name, version, path}] of loaded_plugins().
nlohmann::json plugins_json();
// [{path, plugin (null for a directory), reason}] of load_failures().
nlohmann::json load_failures_json();
// [{name, path, reason}] of skipped_plugins().
nlohmann::json skipped_plugins_json();
// [{name, ops}] of registered_targets(), each with target_ops().
nlohmann::json targets_json();

}  // namespace tileops::cli
