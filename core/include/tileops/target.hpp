// Targets, the application's choice of who serves an op: the in-tree names, the process
// default target, and loading the plugins that bring the others.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tileops/export.hpp"

namespace tileops {

// The target name that forces the in-tree path: kernel types dispatched among the op's own and
// those backends registered for it.
inline constexpr std::string_view BUILTIN = "builtin";

// The target name that forces the op's own (in-tree) kernel types only, ignoring registered
// ones: the portable reference kernels, the numerical oracle. Sub-ops built by a composite
// inherit it like any target.
inline constexpr std::string_view REFERENCE = "reference";

// True for BUILTIN and REFERENCE, the two names of the in-tree path.
constexpr bool is_in_tree_target(std::string_view name) { return name == BUILTIN || name == REFERENCE; }

// An execution policy: a target name, BUILTIN, REFERENCE, or nullopt (process default, else
// detection).
using Target = std::optional<std::string>;

// Sets the process default target (a target name or BUILTIN; nullopt withdraws the value set
// here, so the config's default_target applies again). A value takes precedence over the
// config's default_target and applies to op instances that have not yet
// selected a target. An unknown name is reported when an op selects it, naming
// set_default_target as where the name came from.
TILEOPS_API void set_default_target(Target target);
// The process default target: set_default_target's value, else the config's default_target.
TILEOPS_API Target default_target();

// The process default target and where it came from: "set_default_target", or the config's
// default_target_origin (a file and line, an environment variable, ...). `source` is empty when
// there is no default target.
struct TargetChoice {
  Target target;
  std::string source;
};
TILEOPS_API TargetChoice default_target_choice();

// Loads the backend registry once per process (thread-safe): reads the config and loads every
// plugin on the plugin path (see tileops/extend/plugin.hpp for the rules, loaded_plugins() and
// load_failures()). A plugin that fails to load never makes this throw: it is rolled back,
// logged and recorded. Throws ConfigError when the config cannot be read, and then tries again
// on the next call. Op construction calls it; calling it earlier is harmless. Libraries stay
// loaded for the life of the process.
TILEOPS_API void load_backends();

}  // namespace tileops
