// Opening one plugin library and running its registration.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "plugin/plugin_discovery.hpp"
#include "tileops/extend/backend.hpp"

namespace tileops::plugin {

// A plugin library whose registration succeeded.
struct OpenedPlugin {
  std::string version;
  // Keeps the library open. Its code is never unmapped, even once this is released: the
  // library is opened with RTLD_NODELETE, because objects it created (a device runtime held by
  // a tensor, a kernel) may outlive every registration.
  std::shared_ptr<void> library;
  std::vector<std::string> warnings;  // what the file checks let through (see check_plugin_file)
};

// Checks the file (check_plugin_file, with `allow_insecure`) and the ABI facts it records, then
// opens `candidate.path` (symbols bound now, kept local to the library), reads the plugin ABI
// version and facts and checks them before calling anything else, checks that the name the
// plugin declares is `candidate.name`, then calls its registration function once with
// `registrar`. Throws BackendError whose message is the reason when the file fails a check or
// cannot be opened, lacks an entry point, was built for another ABI, declares another name, or
// its registration returns a failure. Whatever the plugin registered before failing stays in
// `registrar`: the caller rolls it back. A static constructor of the library that throws ends
// the process with a message naming the plugin (see docs/plugin-guide.md).
OpenedPlugin open_plugin(const PluginCandidate& candidate, Registrar& registrar, bool allow_insecure);

}  // namespace tileops::plugin
