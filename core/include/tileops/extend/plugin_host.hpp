// A plugin host: loads plugin libraries into the process's registry, one transaction per
// plugin, remembers what it loaded, skipped and failed on, and rolls it all back when destroyed.
// The process's own plugins are loaded by load_backends(); a vendor's tests load their plugin
// directory with a host of their own to see it load, or fail with the reason they expect.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tileops/export.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/plugin.hpp"

namespace tileops::plugin {

// What a load() call may load.
struct LoadPolicy {
  std::vector<std::string> disabled = {};  // plugin names not to load (the config's disable_plugins)
  std::string disabled_by = {};            // where that list came from, as setting_source() says it
  bool allow_insecure = false;        // the config's allow_insecure_plugins
};

// What the review of a plugin's registrations found.
struct RegistrationReview {
  std::vector<std::string> problems;  // each one fails the plugin's load
  std::vector<std::string> warnings;  // kept in PluginInfo::warnings and logged
};

// Reviews what `registrar` registered against the ops of the process, as PluginHost::load
// reviews a plugin's registrations before it keeps them (see there): a vendor's test can check
// its registrations without building and loading its plugin. Registers and changes nothing.
TILEOPS_API RegistrationReview review_registrations(const Registrar& registrar);

// load_backends() owns one PluginHost for the whole process; tests make their own. Not
// thread-safe: one thread loads, and nothing reads the host while it loads.
class TILEOPS_API PluginHost {
 public:
  PluginHost() = default;
  // Rolls back the registrations of every plugin this host loaded, newest first. The libraries'
  // code stays mapped: objects a plugin made may outlive its registrations.
  ~PluginHost();
  PluginHost(const PluginHost&) = delete;
  PluginHost& operator=(const PluginHost&) = delete;

  // Loads the plugin files (libtileops_<name>.so) of each of `directories` in turn, each
  // directory's in name order; a missing directory is skipped, one that cannot be listed is a
  // failure:
  //  * a name in `policy.disabled` is skipped;
  //  * a name this host met before (in this call or an earlier one, loaded or failed) is
  //    skipped as shadowed by the first file of that name, with a notice in the log; the very
  //    same file met again (a directory listed twice) is ignored;
  //  * any other plugin is checked (the file, then its ABI facts) and registers through a
  //    Registrar owned by its name; what it registered is then reviewed against the ops of the
  //    process (review_registrations). When a check, the registration or the review fails,
  //    everything it registered is rolled back, a warning is logged and the failure is recorded;
  //    the host and the other plugins carry on. A registration that collides with an earlier
  //    plugin's fails the later plugin, never the earlier one.
  // Throws only what the allocator throws.
  void load(const std::vector<std::filesystem::path>& directories, const LoadPolicy& policy = {});

  // True while some PluginHost::load runs on the calling thread, i.e. inside a plugin's
  // registration when called from plugin code.
  static bool loading_on_this_thread();

  // The plugins loaded so far, in load order.
  const std::vector<PluginInfo>& loaded() const { return loaded_; }
  // The failures so far, in discovery order.
  const std::vector<PluginLoadFailure>& failures() const { return failures_; }
  // The plugin files skipped so far, in discovery order.
  const std::vector<SkippedPlugin>& skipped() const { return skipped_; }

 private:
  // What keeps one loaded plugin's registrations and library alive.
  struct Held {
    std::unique_ptr<Registrar> registrar;
    std::shared_ptr<void> library;
  };

  void load_one(const std::string& name, const std::filesystem::path& path, const LoadPolicy& policy);

  std::vector<PluginInfo> loaded_;
  std::vector<Held> held_;  // parallel to loaded_
  std::vector<PluginLoadFailure> failures_;
  std::vector<SkippedPlugin> skipped_;
  std::map<std::string, std::filesystem::path> first_seen_;  // plugin name → the file that won
};

}  // namespace tileops::plugin
