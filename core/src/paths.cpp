#include "tileops/paths.hpp"

#include <boost/dll/runtime_symbol_info.hpp>

#include "tileops/config.hpp"

namespace tileops {

std::filesystem::path library_directory() {
  std::error_code ec;
  const std::filesystem::path dir(boost::dll::this_line_location().parent_path().string());
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(dir, ec);
  return ec ? dir.lexically_normal() : canonical;
}

std::filesystem::path default_plugin_directory() { return library_directory() / "tileops" / "plugins"; }

std::vector<std::filesystem::path> plugin_search_path() {
  std::vector<std::filesystem::path> path{default_plugin_directory()};
  const std::vector<std::filesystem::path> configured = config().plugin_path;
  path.insert(path.end(), configured.begin(), configured.end());
  return path;
}

}  // namespace tileops
