// What the loaders of backends and manifests tell the config: the keys they read are now in use.
#pragma once

namespace tileops::detail {

// Marks plugin_path, manifest_path, disable_plugins and allow_insecure_plugins as used (loading
// the config first when none is): set_config() refuses to change them afterwards.
void freeze_load_time_config();

}  // namespace tileops::detail
