// `tileops validate [PATH...]`: the manifest validator.
#include <iostream>

#include "command.hpp"
#include "common_options.hpp"
#include "tileops/extend/manifest.hpp"

namespace tileops::cli {
namespace po = boost::program_options;

int run_validate(const std::vector<std::string>& args) {
  po::options_description options("validate options");
  options.add_options()("path", po::value<std::vector<std::string>>()->multitoken(),
                        "manifest files or directories of *.yaml (default: the built-in manifests)");
  add_common_options(options);
  po::positional_options_description positional;
  positional.add("path", -1);
  po::variables_map vm;
  if (!parse_args("validate", "[PATH...]", args, options, vm, &positional)) return 0;
  apply_common_options(vm);

  std::vector<std::filesystem::path> paths;
  if (vm.count("path")) {
    for (const std::string& p : vm["path"].as<std::vector<std::string>>()) paths.emplace_back(p);
  }
  const ManifestValidation report = validate_manifests(paths);
  for (const ManifestProblem& p : report.problems) std::cout << p.str() << "\n";
  std::cout << "tileops validate: " << report.ops << " op(s) in " << report.files << " file(s), "
            << report.problems.size() << " problem(s)\n";
  return report.problems.empty() ? 0 : 1;
}

}  // namespace tileops::cli
