// Finding plugin files on the plugin path. Internal; the tests compile their own copy.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/extend/plugin.hpp"

namespace tileops::plugin {

// A file that looks like a plugin: libtileops_<name>.so.
struct PluginCandidate {
  std::string name;
  std::filesystem::path path;
};

// What scanning the plugin path found, before any file is opened.
struct Discovery {
  std::vector<PluginCandidate> candidates;  // path order, then file name order; may repeat a name
  std::vector<PluginLoadFailure> failures;  // directories that exist but cannot be listed
};

// <name> when `file_name` is libtileops_<name>.so with a non-empty <name>; nullopt otherwise.
std::optional<std::string> plugin_name_of(std::string_view file_name);

// Lists the entries named like plugin files (libtileops_<name>.so, whatever their type: links,
// dangling links and directories too) of every directory in `directories`, in that order, each
// directory's entries sorted by name. Relative directories are made absolute against the working directory.
// A directory that does not exist is skipped (logged at debug level); one that is not a
// directory or cannot be listed becomes a failure. Never throws for file system errors.
Discovery discover_plugins(const std::vector<std::filesystem::path>& directories);

}  // namespace tileops::plugin
