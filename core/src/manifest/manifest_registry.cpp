#include "manifest/manifest_registry.hpp"

#include <algorithm>

#include "manifest/builtin_manifests.hpp"

namespace tileops::manifest {

std::vector<std::filesystem::path> manifest_files_in(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(directory, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

ManifestRegistry::ManifestRegistry(const std::vector<std::filesystem::path>& directories) {
  for (const ManifestSource& src : builtin_manifest_sources()) files_.push_back(load_manifest_text(src.text, std::string(src.name)));
  for (const auto& dir : directories) {
    for (const auto& file : manifest_files_in(dir)) files_.push_back(load_manifest_file(file));
  }
  for (const LoadedFile& f : files_) {
    for (const OpSpec& s : f.specs) specs_[s.name].push_back(&s);
  }
}

const OpSpec& ManifestRegistry::spec(std::string_view op) const {
  std::vector<Problem> problems;
  for (const LoadedFile& f : files_) {
    for (const Problem& p : f.problems) {
      if (p.op == op) problems.push_back(p);
    }
  }
  const auto it = specs_.find(op);
  if (!problems.empty()) throw ManifestError(std::move(problems));
  if (it != specs_.end() && it->second.size() > 1) {
    std::string files;
    for (const OpSpec* s : it->second) files += (files.empty() ? "" : " and ") + s->file;
    throw ManifestError({{it->second.back()->file, std::string(op), "(entry)", "the op is defined in both " + files}});
  }
  if (it != specs_.end()) return *it->second.front();
  for (const LoadedFile& f : files_) {
    for (const Problem& p : f.problems) {
      if (p.op == "(file)") problems.push_back(p);
    }
  }
  if (!problems.empty()) throw ManifestError(std::move(problems));
  std::string known;
  for (const auto& [name, list] : specs_) known += (known.empty() ? "" : ", ") + name;
  throw ValueError("no manifest entry is named '" + std::string(op) + "'; the known ops are " + known);
}

std::vector<std::string> ManifestRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, list] : specs_) out.push_back(name);
  return out;
}

}  // namespace tileops::manifest
