// `tileops info [--json]`: the version, the config in effect and every file searched for it, the
// plugin path, the devices and the backends, with the architectures each plugin's kernels serve.
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "common_options.hpp"
#include "json_text.hpp"
#include "plugin_archs.hpp"
#include "tileops/config.hpp"
#include "tileops/paths.hpp"
#include "tileops/reports.hpp"
#include "tileops/version.hpp"

namespace tileops::cli {
namespace po = boost::program_options;

namespace {

// The config files looked at, in order, each with whether it exists: the --config file alone
// when one was given.
nlohmann::json config_search_json(const po::variables_map& vm) {
  std::vector<std::filesystem::path> files;
  if (vm.count("config")) {
    files.emplace_back(vm["config"].as<std::string>());
  } else {
    files = config_search_path();
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& f : files) {
    std::error_code ec;
    list.push_back({{"path", f.string()}, {"exists", std::filesystem::exists(f, ec)}});
  }
  return list;
}

bool present(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::exists(p, ec);
}

}  // namespace

int run_info(const std::vector<std::string>& args) {
  po::options_description options("info options");
  options.add_options()("json", "print one JSON object instead of text");
  add_common_options(options);
  po::variables_map vm;
  if (!parse_args("info", "[--json]", args, options, vm)) return 0;
  apply_common_options(vm);
  nlohmann::json info = nlohmann::json::parse(reports::info());
  const Config cfg = config();
  info["config_search_path"] = config_search_json(vm);
  const nlohmann::json kernel_archs = plugin_kernel_archs(nlohmann::json::parse(reports::ops()));
  for (auto& p : info["plugins"]) {
    const auto served = kernel_archs.find(p["name"].get<std::string>());
    p["kernel_archs"] = served == kernel_archs.end() ? nlohmann::json::array() : *served;
  }

  if (vm.count("json")) {
    std::cout << json_text(info) << "\n";
    return 0;
  }
  std::cout << "tileops " << kVersion << "\n";
  std::cout << "config file:    " << (cfg.file ? cfg.file->string() : "(none)") << "\n";
  std::cout << "config files searched:\n";
  for (const auto& f : info["config_search_path"]) {
    std::cout << "  " << f["path"].get<std::string>() << (f["exists"].get<bool>() ? "" : "  (absent)") << "\n";
  }
  std::cout << "default target: " << (cfg.default_target ? *cfg.default_target : "(detect per device)") << "\n";
  std::cout << "plugin path:\n";
  for (const auto& p : plugin_search_path()) std::cout << "  " << p.string() << (present(p) ? "" : "  (absent)") << "\n";
  std::cout << "manifest path:" << (cfg.manifest_path.empty() ? " (none: the built-in manifests only)" : "") << "\n";
  for (const auto& p : cfg.manifest_path) std::cout << "  " << p.string() << (present(p) ? "" : "  (absent)") << "\n";
  // A kernel choice setting, with where it came from; nothing when it is empty.
  const auto setting = [&](const char* key) {
    const nlohmann::json& s = info[key];
    if (s["values"].empty()) return;
    std::string values;
    if (s["values"].is_object()) {
      for (const auto& [op, k] : s["values"].items()) values += (values.empty() ? "" : ", ") + op + "=" + k.get<std::string>();
    } else {
      for (const auto& v : s["values"]) values += (values.empty() ? "" : ", ") + v.get<std::string>();
    }
    std::cout << key << ": " << values << "  (from " << s["from"].get<std::string>() << ")\n";
  };
  setting("disable_plugins");
  setting("disable_kernels");
  setting("prefer_kernels");
  std::cout << "devices:\n";
  for (const auto& rt : info["devices"]) {
    std::cout << "  " << rt["type"].get<std::string>() << ": " << rt["count"].get<int>() << " device(s)\n";
    for (const auto& d : rt["devices"]) {
      std::cout << "    " << rt["type"].get<std::string>() << ":" << d["index"].get<int>() << "  "
                << d["name"].get<std::string>() << "\n";
    }
  }
  std::cout << "collectives:" << (info["collectives"].empty() ? " (no provider)" : "") << "\n";
  for (const auto& c : info["collectives"]) {
    std::cout << "  " << c["device_type"].get<std::string>() << ": " << c["provider"].get<std::string>()
              << (c["available"].get<bool>() ? " " : " unavailable: ") << c["description"].get<std::string>() << "\n";
  }
  std::cout << "plugins:" << (info["plugins"].empty() ? " (none)" : "") << "\n";
  for (const auto& p : info["plugins"]) {
    const std::string archs = kernel_archs_text(p["kernel_archs"]);
    std::cout << "  " << p["name"].get<std::string>() << " " << p["version"].get<std::string>()
              << (archs.empty() ? "" : "  (" + archs + ")") << "\n";
  }
  if (!info["load_failures"].empty()) {
    std::cout << "load failures: " << info["load_failures"].size() << " (see 'tileops plugins')\n";
  }
  std::cout << "targets:" << (info["targets"].empty() ? " (none)" : "") << "\n";
  for (const auto& t : info["targets"]) std::cout << "  " << t["name"].get<std::string>() << "\n";
  return 0;
}

}  // namespace tileops::cli
