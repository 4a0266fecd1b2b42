// The process-wide plugin host behind load_backends() and the plugin queries.
#include <mutex>

#include "plugin/plugin_host.hpp"
#include "tileops/backend.hpp"
#include "tileops/config.hpp"
#include "tileops/paths.hpp"
#include "tileops/plugin.hpp"

namespace tileops {
namespace {

// Never destroyed: the registrations of loaded plugins must outlive every static object that
// may still use them, and rolling them back at exit would serve no one.
plugin::PluginHost& process_host() {
  static plugin::PluginHost* host = new plugin::PluginHost();
  return *host;
}

}  // namespace

void load_backends() {
  static std::once_flag once;
  std::call_once(once, [] { process_host().load(plugin_search_path(), config().disable_plugins); });
}

std::vector<PluginInfo> loaded_plugins() {
  load_backends();
  return process_host().loaded();
}

std::vector<PluginLoadFailure> load_failures() {
  load_backends();
  return process_host().failures();
}

std::vector<SkippedPlugin> skipped_plugins() {
  load_backends();
  return process_host().skipped();
}

}  // namespace tileops
