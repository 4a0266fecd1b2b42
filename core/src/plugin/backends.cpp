// The process-wide plugin host behind load_backends() and the plugin queries.
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>

#include "config_freeze.hpp"
#include "logging.hpp"
#include "tileops/extend/plugin_host.hpp"
#include "setting_source.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/plugin.hpp"
#include "tileops/paths.hpp"

namespace tileops {
namespace {

// Never destroyed: the registrations of loaded plugins must outlive every static object that
// may still use them, and rolling them back at exit would serve no one.
plugin::PluginHost& process_host() {
  static plugin::PluginHost* host = new plugin::PluginHost();
  return *host;
}

// Config entries that matched nothing are most likely typos: each gets a warning.
void warn_unmatched_config(const Config& c, const plugin::PluginHost& host) {
  for (const std::filesystem::path& dir : c.plugin_path) {
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) log().warn("plugin directory {} (on the configured plugin_path) does not exist", dir.string());
  }
  std::set<std::string> found;
  for (const auto& p : host.loaded()) found.insert(p.name);
  for (const auto& f : host.failures()) {
    if (f.plugin) found.insert(*f.plugin);
  }
  for (const auto& s : host.skipped()) found.insert(s.name);
  for (const std::string& name : c.disable_plugins) {
    if (!found.contains(name)) {
      log().warn("disable_plugins names '{}', but no plugin file libtileops_{}.so is on the plugin path", name, name);
    }
  }
}

}  // namespace

void load_backends() {
  // Re-entering call_once from inside its own callable would deadlock.
  if (plugin::PluginHost::loading_on_this_thread()) {
    throw BackendError("load_backends: called while plugins are loading; a plugin must not construct ops or query "
                       "the loaded plugins from its registration");
  }
  static std::once_flag once;
  std::call_once(once, [] {
    const auto start = std::chrono::steady_clock::now();
    plugin::PluginHost& host = process_host();
    detail::freeze_load_time_config();
    const Config c = config();
    host.load(plugin_search_path(),
              {c.disable_plugins, setting_source("disable_plugins", c.disable_plugins_origin), c.allow_insecure_plugins});
    warn_unmatched_config(c, host);
    const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    log().info("loaded {} plugin(s) in {:.2f} ms; {} load failure(s), {} skipped", host.loaded().size(), ms,
               host.failures().size(), host.skipped().size());
  });
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
