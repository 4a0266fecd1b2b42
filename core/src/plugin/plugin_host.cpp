#include "tileops/extend/plugin_host.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "logging.hpp"
#include "plugin/op_catalogue.hpp"
#include "plugin/plugin_discovery.hpp"
#include "plugin/plugin_library.hpp"
#include "plugin/registration_review.hpp"
#include "tileops/errors.hpp"

namespace tileops::plugin {
namespace {

thread_local bool loading = false;

// Marks the calling thread as loading plugins for its lifetime.
class LoadingScope {
 public:
  LoadingScope() : outer_(std::exchange(loading, true)) {}
  ~LoadingScope() { loading = outer_; }
  LoadingScope(const LoadingScope&) = delete;
  LoadingScope& operator=(const LoadingScope&) = delete;

 private:
  bool outer_;
};

}  // namespace

bool PluginHost::loading_on_this_thread() { return loading; }

PluginHost::~PluginHost() {
  for (auto it = held_.rbegin(); it != held_.rend(); ++it) it->registrar->rollback();
}

void PluginHost::load(const std::vector<std::filesystem::path>& directories, const LoadPolicy& policy) {
  const LoadingScope scope;
  const std::vector<std::string>& disabled = policy.disabled;
  Discovery found = discover_plugins(directories);
  for (auto& failure : found.failures) {
    log().warn("plugin directory {} {}", failure.path.string(), failure.reason);
    failures_.push_back(std::move(failure));
  }
  for (const PluginCandidate& candidate : found.candidates) {
    if (std::find(disabled.begin(), disabled.end(), candidate.name) != disabled.end()) {
      const std::string by = policy.disabled_by.empty() ? "the config's disable_plugins" : policy.disabled_by;
      log().info("plugin '{}' at {} is disabled by {}; not loaded", candidate.name, candidate.path.string(), by);
      skipped_.push_back({candidate.name, candidate.path, "disabled by " + by});
      continue;
    }
    const auto [first, is_first] = first_seen_.try_emplace(candidate.name, candidate.path);
    if (!is_first && first->second == candidate.path) {
      log().debug("plugin '{}' at {} is listed twice on the plugin path; loaded once", candidate.name,
                  candidate.path.string());
      continue;
    }
    if (!is_first) {
      log().info("plugin '{}' at {} is shadowed by {}; not loaded", candidate.name, candidate.path.string(),
                 first->second.string());
      skipped_.push_back({candidate.name, candidate.path, "shadowed by " + first->second.string()});
      continue;
    }
    load_one(candidate.name, candidate.path, policy);
  }
}

void PluginHost::load_one(const std::string& name, const std::filesystem::path& path, const LoadPolicy& policy) {
  const auto start = std::chrono::steady_clock::now();
  auto registrar = std::make_unique<Registrar>(name);
  try {
    OpenedPlugin opened = open_plugin({name, path}, *registrar, policy.allow_insecure);
    RegistrationReview review = review_registrations(*registrar, OpCatalogue::of_process());
    if (!review.problems.empty()) {
      std::string why;
      for (const std::string& p : review.problems) why += (why.empty() ? "" : "; ") + p;
      throw BackendError("registered what the ops do not accept: " + why);
    }
    std::vector<std::string> warnings = std::move(opened.warnings);
    warnings.insert(warnings.end(), review.warnings.begin(), review.warnings.end());
    for (const std::string& w : warnings) log().warn("plugin '{}' at {}: {}", name, path.string(), w);
    const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    log().debug("loaded plugin '{}' {} from {} in {:.2f} ms", name, opened.version, path.string(), ms);
    held_.push_back({std::move(registrar), std::move(opened.library)});
    loaded_.push_back({name, opened.version, path, std::move(warnings)});
  } catch (const std::exception& e) {
    registrar->rollback();
    log().warn("plugin '{}' at {} {}; nothing it registered remains", name, path.string(), e.what());
    failures_.push_back({path, name, e.what()});
  }
}

}  // namespace tileops::plugin
