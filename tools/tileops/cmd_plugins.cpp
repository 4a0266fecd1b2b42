// `tileops plugins [--json] [--strict]`: the plugins loaded, the load failures and the skipped
// files; with --strict, exit status 1 when a plugin failed to load or loaded with a warning (an
// ambiguity with another kernel type, an insecure file allowed by the config).
#include <iostream>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "common_options.hpp"
#include "json_text.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/paths.hpp"
#include "tileops/reports.hpp"

namespace tileops::cli {
namespace po = boost::program_options;

int run_plugins(const std::vector<std::string>& args) {
  po::options_description options("plugins options");
  options.add_options()("json", "print one JSON object instead of text")
      ("strict", "exit with status 1 when a plugin failed to load or loaded with a warning (e.g. an ambiguity)");
  add_common_options(options);
  po::variables_map vm;
  if (!parse_args("plugins", "[--json] [--strict]", args, options, vm)) return 0;
  apply_common_options(vm);
  load_backends();

  nlohmann::json report;
  nlohmann::json path = nlohmann::json::array();
  for (const auto& p : plugin_search_path()) path.push_back(p.string());
  report["plugin_path"] = path;
  report.update(nlohmann::json::parse(reports::plugins()));
  std::size_t warned = 0;
  for (const auto& p : report["plugins"]) warned += p["warnings"].empty() ? 0 : 1;
  const std::size_t failed = report["load_failures"].size();
  const int status = vm.count("strict") && (failed > 0 || warned > 0) ? 1 : 0;
  if (status != 0 && failed > 0) std::cerr << "tileops plugins: " << failed << " plugin(s) failed to load (--strict)\n";
  if (status != 0 && warned > 0) {
    std::cerr << "tileops plugins: " << warned << " plugin(s) loaded with warnings (--strict)\n";
  }
  if (vm.count("json")) {
    std::cout << json_text(report) << "\n";
    return status;
  }
  std::cout << "plugins loaded:" << (report["plugins"].empty() ? " (none)" : "") << "\n";
  for (const auto& p : report["plugins"]) {
    std::cout << "  " << p["name"].get<std::string>() << " " << p["version"].get<std::string>() << "  "
              << p["path"].get<std::string>() << "\n";
    for (const auto& w : p["warnings"]) std::cout << "    warning: " << w.get<std::string>() << "\n";
  }
  if (!report["load_failures"].empty()) {
    std::cout << "load failures:\n";
    for (const auto& f : report["load_failures"]) {
      std::cout << "  " << f["path"].get<std::string>() << " " << f["reason"].get<std::string>() << "\n";
    }
  }
  if (!report["skipped"].empty()) {
    std::cout << "skipped:\n";
    for (const auto& s : report["skipped"]) {
      std::cout << "  " << s["path"].get<std::string>() << ": " << s["reason"].get<std::string>() << "\n";
    }
  }
  return status;
}

}  // namespace tileops::cli
