// Process configuration: a `tileops.conf` INI file, overridden by environment variables,
// overridden in turn by whoever calls set_config() (the CLI's flags, an application).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tileops/export.hpp"

namespace tileops {

// One prefer_kernels entry: the kernel type `key` is what dispatch takes for op class `op`
// whenever that key applies to the call.
struct KernelPreference {
  std::string op;   // e.g. RMSNormFwdOp
  std::string key;  // e.g. cpu_rms_norm
  bool operator==(const KernelPreference&) const = default;
};

struct TILEOPS_API Config {
  // The file the values came from; empty when no file was found.
  std::optional<std::filesystem::path> file;
  // Target every op instance uses unless its constructor names one ("builtin" forces the
  // in-tree kernels). Empty: detect per call device.
  std::optional<std::string> default_target;
  // Where default_target came from, for messages: "config file <path>:<line>", "environment
  // variable TILEOPS_DEFAULT_TARGET", or whatever a caller of set_config says ("set_config" when
  // it says nothing). Empty without a default_target.
  std::string default_target_origin;
  // Directories scanned for plugins, before the default <libdir>/tileops/plugins.
  std::vector<std::filesystem::path> plugin_path;
  // Extra directories of manifest YAML files (an application's own ops).
  std::vector<std::filesystem::path> manifest_path;
  // The log level's name: trace, debug, info, warn, error, critical or off (canonical: the file,
  // the environment and set_config also take any case and `warning`).
  std::string log_level = "warn";
  // Plugin names ("cuda" for libtileops_cuda.so) that are not loaded.
  std::vector<std::string> disable_plugins;
  // Kernel type keys ("cpu_rms_norm") that dispatch never selects, in any op.
  std::vector<std::string> disable_kernels;
  // Per op class, the kernel type dispatch takes whenever it applies, ahead of the kernel
  // types' own precedence; at most one entry per op class.
  std::vector<KernelPreference> prefer_kernels;
  // Where each of the three lists above came from, for messages: "config file <path>:<line>",
  // "environment variable TILEOPS_DISABLE_KERNELS", or what a caller of set_config says
  // ("set_config" when it says nothing). Empty for an empty list.
  std::string disable_plugins_origin;
  std::string disable_kernels_origin;
  std::string prefer_kernels_origin;
  // Loads plugin files that everyone may write, or that sit in a directory everyone may write
  // (refused otherwise: anyone on the machine could replace them with code of their own).
  bool allow_insecure_plugins = false;
  // The bounds an op instance's caches start with (see Op::cache_capacity), 1 to 1048576 each:
  // repeats of a call, and the kernels a target's builder made. The second is large so that a
  // target builds each specialization once, as a builder expects; an instance that evicts one
  // says so in a warning.
  std::size_t call_cache_capacity = 256;
  std::size_t target_kernel_cache_capacity = 4096;
};

// Parses one INI file, in one pass. Keys, before any section header or under [tileops]:
// default_target, plugin_path (':'-separated, relative entries are relative to the file's
// directory), manifest_path (likewise), log_level, disable_plugins and disable_kernels
// (','-separated names), prefer_kernels (','-separated Op=key entries),
// allow_insecure_plugins (true or false), call_cache_capacity and target_kernel_cache_capacity
// (whole numbers from 1 to 1048576). Lines starting with '#' or ';' are comments, and '#'
// after a value starts one; a value's surrounding quotes (" or ') are removed. Throws
// ConfigError naming the file, the line and the key for unknown keys, keys in another section,
// malformed lines, a repeated key (its second line, and the first) and invalid values (a target name that
// is empty, longer than 256 characters or not printable ASCII without spaces; a path entry longer
// than 4096 characters or a value with control characters; a plugin name with spaces or '/'; a
// kernel key with spaces, ',' or '='; a prefer_kernels entry that is not Op=key, or names an op
// twice),
// and naming the file and why for a path that is not a regular file of at most 16 MiB (the
// file is then never opened, or read no further than the limit).
TILEOPS_API Config parse_config_file(const std::filesystem::path& path);

// The config file in effect: $TILEOPS_CONFIG (a ConfigError unless it names an existing
// regular file), else the first existing of $XDG_CONFIG_HOME/tileops/tileops.conf (default
// ~/.config), each $XDG_CONFIG_DIRS/tileops/tileops.conf (default /etc/xdg),
// /etc/tileops/tileops.conf; relative XDG directories are ignored. A candidate that exists
// but is not a regular file, or cannot be examined, is a ConfigError naming it.
TILEOPS_API std::optional<std::filesystem::path> find_config_file();

// The files find_config_file() looks at, in order: $TILEOPS_CONFIG alone when set, else the
// candidates above (whether they exist or not).
TILEOPS_API std::vector<std::filesystem::path> config_search_path();

// The values of `file` (default: find_config_file(); none found: the defaults), then
// TILEOPS_DEFAULT_TARGET, TILEOPS_PLUGIN_PATH, TILEOPS_MANIFEST_PATH, TILEOPS_LOG_LEVEL,
// TILEOPS_DISABLE_PLUGINS, TILEOPS_DISABLE_KERNELS, TILEOPS_PREFER_KERNELS,
// TILEOPS_ALLOW_INSECURE_PLUGINS (true or false, 1 or 0),
// TILEOPS_CALL_CACHE_CAPACITY and TILEOPS_TARGET_KERNEL_CACHE_CAPACITY on top. Throws ConfigError for a malformed file or variable, naming
// the variable, the value and what is accepted (the checks of parse_config_file).
TILEOPS_API Config load_config(const std::optional<std::filesystem::path>& file = std::nullopt);

// A copy of the process configuration: load_config() on first use (thread-safe).
TILEOPS_API Config config();
// Replaces the process configuration (validated like a file's values) and applies its log
// level. A default_target without a default_target_origin gets "set_config". Backends and
// manifests load once, at the first op (or load_backends()): after that, a config that changes
// plugin_path, manifest_path, disable_plugins or allow_insecure_plugins throws ConfigError
// naming them and applies nothing; default_target (for instances that have not settled their
// target yet) and log_level still apply, and disable_kernels and prefer_kernels apply to op
// instances constructed afterwards.
TILEOPS_API void set_config(Config config);

// The canonical name of a log level: trace, debug, info, warn, error, critical or off, taken in
// any case, and `warning` for warn; nullopt for any other name.
TILEOPS_API std::optional<std::string> canonical_log_level(const std::string& name);
// Names accepted by log_level (those canonical_log_level knows).
TILEOPS_API bool is_log_level_name(const std::string& name);

}  // namespace tileops
