// JSON views of the loaded backends and the process's setup: what `tileops info`, `plugins`
// and `targets` print and what the C API hands other languages.
#pragma once

#include <nlohmann/json.hpp>


namespace tileops::json {

// [{name, version, path, warnings}] of loaded_plugins().
nlohmann::json plugins_json();
// [{path, plugin (null for a directory), reason}] of load_failures().
nlohmann::json load_failures_json();
// [{name, path, reason}] of skipped_plugins().
nlohmann::json skipped_plugins_json();
// [{name, ops}] of registered_targets(), each with target_ops().
nlohmann::json targets_json();
// [{type, accelerator, count, devices: [{index, name, arch, sm_count}]}] of device_runtimes().
nlohmann::json devices_json();
// {version, config_file, default_target, log_level, config_search_path: [{path, exists}],
// plugin_path, devices, plugins, load_failures, targets}: the config in effect and the
// loaded backends. Loads the backends first.
nlohmann::json info_json();

}  // namespace tileops::json
