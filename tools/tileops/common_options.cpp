#include "common_options.hpp"

#include <sstream>

#include "tileops/config.hpp"

namespace tileops::cli {
namespace po = boost::program_options;

void add_common_options(po::options_description& options) {
  options.add_options()
      ("config", po::value<std::string>(), "read this config file instead of the one found by TILEOPS_CONFIG "
                                           "and the config directories")
      ("plugin-path", po::value<std::string>(), "':'-separated plugin directories (overrides the config)")
      ("default-target", po::value<std::string>(), "default target name, or 'builtin' (overrides the config)")
      ("log-level", po::value<std::string>(), "trace, debug, info, warn, error, critical or off");
}

void apply_common_options(const po::variables_map& vm) {
  std::optional<std::filesystem::path> file;
  if (vm.count("config")) file = vm["config"].as<std::string>();
  Config cfg = load_config(file);
  if (vm.count("plugin-path")) {
    cfg.plugin_path.clear();
    std::istringstream in(vm["plugin-path"].as<std::string>());
    std::string dir;
    while (std::getline(in, dir, ':')) {
      if (!dir.empty()) cfg.plugin_path.emplace_back(dir);
    }
  }
  if (vm.count("default-target")) {
    cfg.default_target = vm["default-target"].as<std::string>();
    cfg.default_target_origin = "the --default-target option";
  }
  if (vm.count("log-level")) cfg.log_level = vm["log-level"].as<std::string>();
  set_config(std::move(cfg));
}

}  // namespace tileops::cli
