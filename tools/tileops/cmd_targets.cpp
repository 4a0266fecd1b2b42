// `tileops targets [--json]`: the registered targets and the ops each one builds.
#include <iostream>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "common_options.hpp"
#include "json_text.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/reports.hpp"

namespace tileops::cli {
namespace po = boost::program_options;

int run_targets(const std::vector<std::string>& args) {
  po::options_description options("targets options");
  options.add_options()("json", "print one JSON object instead of text");
  add_common_options(options);
  po::variables_map vm;
  if (!parse_args("targets", "[--json]", args, options, vm)) return 0;
  apply_common_options(vm);
  load_backends();

  const Target fallback = default_target();
  nlohmann::json report;
  report["default_target"] = fallback ? nlohmann::json(*fallback) : nlohmann::json(nullptr);
  report["targets"] = nlohmann::json::parse(reports::targets());
  if (vm.count("json")) {
    std::cout << json_text(report) << "\n";
    return 0;
  }
  std::cout << "default target: " << (fallback ? *fallback : "(detect per device)") << "\n";
  std::cout << "targets:" << (report["targets"].empty() ? " (none registered)" : "") << "\n";
  for (const auto& t : report["targets"]) {
    std::cout << "  " << t["name"].get<std::string>() << ":";
    if (t["ops"].empty()) std::cout << " (detector only, no op builders)";
    for (const auto& op : t["ops"]) std::cout << " " << op.get<std::string>();
    std::cout << "\n";
  }
  return 0;
}

}  // namespace tileops::cli
