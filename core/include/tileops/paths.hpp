// Where the core library lives and where it looks for plugins.
#pragma once

#include <filesystem>
#include <vector>

#include "tileops/export.hpp"

namespace tileops {

// The directory holding libtileops itself (found at run time, so an installed tree can move).
TILEOPS_API std::filesystem::path library_directory();

// <directory of libtileops>/tileops/plugins.
TILEOPS_API std::filesystem::path default_plugin_directory();

// The plugin path in effect: the default plugin directory (the distribution's own plugins load
// first, so that no plugin found elsewhere can take their keys, targets or names), then the
// config's plugin_path (file or TILEOPS_PLUGIN_PATH).
TILEOPS_API std::vector<std::filesystem::path> plugin_search_path();

}  // namespace tileops
