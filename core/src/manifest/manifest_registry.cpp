#include "manifest/manifest_registry.hpp"

#include <algorithm>

#include "join.hpp"
#include "logging.hpp"
#include "manifest/builtin_manifests.hpp"
#include "text_file.hpp"

namespace tileops::manifest {

std::vector<LoadedFile> load_manifest_directory(const std::filesystem::path& directory) {
  namespace fs = std::filesystem;
  std::vector<LoadedFile> out;
  const auto problem = [&](const std::string& reason) {
    LoadedFile f;
    f.file = path_for_message(directory);
    f.problems.push_back({f.file, "(file)", "(file)", reason});
    out.push_back(std::move(f));
    return out;
  };
  std::error_code ec;
  const fs::file_status status = fs::status(directory, ec);
  if (status.type() == fs::file_type::not_found) return out;
  if (ec) return problem("cannot be examined: " + ec.message());
  if (!fs::is_directory(status)) {
    return problem("is a " + file_type_name(status.type()) + ", not a directory of manifest files");
  }
  std::vector<fs::path> files;
  fs::directory_iterator it(directory, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".yaml") files.push_back(it->path());
  }
  if (ec) return problem("cannot be listed: " + ec.message());
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) out.push_back(load_manifest_file(file));
  return out;
}

ManifestRegistry::ManifestRegistry(const std::vector<std::filesystem::path>& directories,
                                   const std::vector<std::pair<std::string, std::string>>& embedded) {
  for (const ManifestSource& src : builtin_manifest_sources()) files_.push_back(load_manifest_text(src.text, std::string(src.name)));
  for (const auto& [name, text] : embedded) {
    files_.push_back(load_manifest_text(text, name));
    embedded_files_.insert(name);
  }
  for (const auto& dir : directories) {
    for (LoadedFile& file : load_manifest_directory(dir)) {
      for (const ManifestProblem& p : file.problems) {
        if (p.op == "(file)") log().warn("manifest_path: {} {}", p.file, p.reason);
      }
      files_.push_back(std::move(file));
    }
  }
  for (const LoadedFile& f : files_) index(f);
}

void ManifestRegistry::index(const LoadedFile& file) {
  for (const OpSpec& s : file.specs) specs_[s.name].push_back(&s);
}

void ManifestRegistry::add_embedded(const std::string& name, const std::string& text) {
  files_.push_back(load_manifest_text(text, name));
  embedded_files_.insert(name);
  index(files_.back());
}

const OpSpec& ManifestRegistry::spec(std::string_view op) const {
  std::vector<ManifestProblem> problems;
  for (const LoadedFile& f : files_) {
    for (const ManifestProblem& p : f.problems) {
      if (p.op == op) problems.push_back(p);
    }
  }
  const auto it = specs_.find(op);
  if (!problems.empty()) throw ManifestError(std::move(problems));
  if (it != specs_.end() && it->second.size() > 1) {
    const auto embedded = std::find_if(it->second.begin(), it->second.end(),
                                       [&](const OpSpec* s) { return embedded_files_.contains(s->file); });
    if (embedded != it->second.end()) {
      for (const OpSpec* s : it->second) {
        if (s->canonical != (*embedded)->canonical) {
          throw ManifestError({{s->file, std::string(op), "(entry)",
                                "the op is defined differently in " + s->file + " and in " + (*embedded)->file +
                                    " (embedded in the program); remove the file from the manifest path or make it "
                                    "say the same"}});
        }
      }
      return **embedded;
    }
    std::string files;
    for (const OpSpec* s : it->second) files += (files.empty() ? "" : " and ") + s->file;
    throw ManifestError({{it->second.back()->file, std::string(op), "(entry)", "the op is defined in both " + files}});
  }
  if (it != specs_.end()) return *it->second.front();
  for (const LoadedFile& f : files_) {
    for (const ManifestProblem& p : f.problems) {
      if (p.op == "(file)") problems.push_back(p);
    }
  }
  if (!problems.empty()) throw ManifestError(std::move(problems));
  const std::string known = join_with(specs_, [](std::string& out, const auto& spec) { out += spec.first; });
  throw ValueError("no manifest entry is named '" + std::string(op) + "'; the known ops are " + known);
}

std::vector<std::string> ManifestRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, list] : specs_) out.push_back(name);
  return out;
}

}  // namespace tileops::manifest
