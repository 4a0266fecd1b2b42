#include "common_options.hpp"

#include <dlfcn.h>

#include <sstream>

#include "command.hpp"
#include "tileops/config.hpp"

namespace tileops::cli {
namespace po = boost::program_options;
namespace {

// The process config from the file and the environment, with the options on top.
void apply_config(const po::variables_map& vm) {
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

}  // namespace

void add_common_options(po::options_description& options) {
  options.add_options()
      ("config", po::value<std::string>(), "read this config file instead of the one found by TILEOPS_CONFIG "
                                           "and the config directories")
      ("plugin-path", po::value<std::string>(), "':'-separated plugin directories (overrides the config)")
      ("default-target", po::value<std::string>(), "default target name, or 'builtin' (overrides the config)")
      ("log-level", po::value<std::string>(), "trace, debug, info, warn, error, critical or off")
      ("ops-library", po::value<std::vector<std::string>>()->composing(),
       "a shared library whose ops (built with tileops_add_ops) join the catalog (repeatable)");
}

void apply_common_options(const po::variables_map& vm) {
  // What the command line got wrong is a usage error; a config file that is there but malformed
  // stays the library's ConfigError.
  if (vm.count("config")) {
    const std::string file = vm["config"].as<std::string>();
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
      throw UsageError("--config " + file + ": no such file; expected the path of a config file", "ConfigError");
    }
  }
  if (vm.count("log-level") && !is_log_level_name(vm["log-level"].as<std::string>())) {
    throw UsageError("--log-level: invalid log level '" + vm["log-level"].as<std::string>() +
                         "'; expected trace, debug, info, warn (or warning), error, critical or off, in any case",
                     "ConfigError");
  }
  apply_config(vm);
  if (vm.count("ops-library")) {
    for (const std::string& path : vm["ops-library"].as<std::vector<std::string>>()) {
      // Never closed: its ops and their kernels live as long as the process. Opening it runs
      // the generated code that adds its manifests and catalog entries.
      if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
        const char* why = dlerror();
        throw UsageError("--ops-library " + path + ": cannot be loaded: " + (why != nullptr ? why : "unknown reason"));
      }
    }
  }
}

}  // namespace tileops::cli
