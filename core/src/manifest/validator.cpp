#include "tileops/extend/manifest.hpp"

#include <map>
#include <set>

#include "manifest/builtin_manifests.hpp"
#include "manifest/manifest_loader.hpp"
#include "manifest/manifest_registry.hpp"
#include "signature/plan_builder.hpp"
#include "text_file.hpp"

namespace tileops {

using namespace manifest;

ManifestValidation validate_manifests(const std::vector<std::filesystem::path>& paths) {
  ManifestValidation report;
  std::vector<LoadedFile> files;
  std::set<std::string> builtin_ops;
  for (const ManifestSource& src : builtin_manifest_sources()) {
    LoadedFile f = load_manifest_text(src.text, std::string(src.name));
    for (const OpSpec& s : f.specs) builtin_ops.insert(s.name);
    if (paths.empty()) files.push_back(std::move(f));
  }
  for (const auto& path : paths) {
    std::error_code ec;
    const std::filesystem::file_status status = std::filesystem::status(path, ec);
    if (std::filesystem::is_directory(status)) {
      for (LoadedFile& file : load_manifest_directory(path)) files.push_back(std::move(file));
    } else if (status.type() == std::filesystem::file_type::not_found) {
      report.problems.push_back({path_for_message(path), "(file)", "(file)", "does not exist"});
    } else {
      files.push_back(load_manifest_file(path));  // reports a path that cannot be examined or read
    }
  }

  std::set<std::string> known_ops = builtin_ops;
  std::map<std::string, std::string> defined_in;
  for (const LoadedFile& f : files) {
    for (const OpSpec& s : f.specs) known_ops.insert(s.name);
  }
  for (const LoadedFile& f : files) {
    ++report.files;
    report.problems.insert(report.problems.end(), f.problems.begin(), f.problems.end());
    const std::string stem = std::filesystem::path(f.file).stem().string();
    for (const OpSpec& s : f.specs) {
      ++report.ops;
      if (const auto [it, fresh] = defined_in.emplace(s.name, f.file); !fresh) {
        report.problems.push_back({f.file, s.name, "(entry)", "the op is already defined in " + it->second});
        continue;
      }
      if (stem != s.family && stem.rfind(s.family + "_", 0) != 0) {
        report.problems.push_back({f.file, s.name, "family", "an op of family '" + s.family + "' belongs in " + s.family +
                                                                 ".yaml or " + s.family + "_<shard>.yaml"});
      }
      detail::BuildResult r = detail::build_plan(s);
      report.problems.insert(report.problems.end(), r.problems.begin(), r.problems.end());
      if (!s.composition) continue;
      for (std::size_t i = 0; i < s.composition->stages.size(); ++i) {
        const auto& st = s.composition->stages[i];
        if (!st.op.empty() && !known_ops.count(st.op)) {
          report.problems.push_back({f.file, s.name, "composition.stages[" + std::to_string(i) + "].op",
                                     "'" + st.op + "' is not an op of any manifest"});
        }
      }
    }
  }
  return report;
}

}  // namespace tileops
