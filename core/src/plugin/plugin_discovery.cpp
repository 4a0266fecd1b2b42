#include "plugin/plugin_discovery.hpp"

#include <algorithm>
#include <system_error>

#include "logging.hpp"

namespace tileops::plugin {
namespace {

constexpr std::string_view kPrefix = "libtileops_";
constexpr std::string_view kSuffix = ".so";

// The plugin files of one directory, sorted by file name; records a failure when the directory
// cannot be listed.
void scan_directory(const std::filesystem::path& dir, Discovery& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (!fs::exists(status)) {
    log().debug("plugin directory {} does not exist; skipped", dir.string());
    return;
  }
  if (!fs::is_directory(status)) {
    out.failures.push_back({dir, std::nullopt, "is on the plugin path but is not a directory"});
    return;
  }
  std::vector<PluginCandidate> found;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    // Whatever the entry is (a dangling link, a directory): the host checks it before loading,
    // and reports why it does not load.
    if (const auto name = plugin_name_of(it->path().filename().string())) found.push_back({*name, it->path()});
  }
  if (ec) {
    out.failures.push_back({dir, std::nullopt, "cannot be listed: " + ec.message()});
    return;
  }
  std::sort(found.begin(), found.end(),
            [](const PluginCandidate& a, const PluginCandidate& b) { return a.path.filename() < b.path.filename(); });
  out.candidates.insert(out.candidates.end(), found.begin(), found.end());
}

}  // namespace

std::optional<std::string> plugin_name_of(std::string_view file_name) {
  if (file_name.size() <= kPrefix.size() + kSuffix.size()) return std::nullopt;
  if (!file_name.starts_with(kPrefix) || !file_name.ends_with(kSuffix)) return std::nullopt;
  return std::string(file_name.substr(kPrefix.size(), file_name.size() - kPrefix.size() - kSuffix.size()));
}

Discovery discover_plugins(const std::vector<std::filesystem::path>& directories) {
  Discovery out;
  for (const auto& dir : directories) {
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(dir, ec);
    scan_directory(ec ? dir : absolute.lexically_normal(), out);
  }
  return out;
}

}  // namespace tileops::plugin
