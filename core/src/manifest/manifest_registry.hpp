// The op specs a process knows: the built-in manifests, then every *.yaml in the config's
// manifest_path directories.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/manifest_error.hpp"
#include "manifest/manifest_loader.hpp"
#include "tileops/export.hpp"

namespace tileops::manifest {

class TILEOPS_API ManifestRegistry {
 public:
  // Loads the built-in manifests and each directory's *.yaml files (sorted by name; a missing
  // directory is skipped). Never throws for malformed files: their problems are kept.
  explicit ManifestRegistry(const std::vector<std::filesystem::path>& directories);

  // The spec named `op`. Throws ManifestError when its entry (or, if the name is found nowhere,
  // any unreadable file) has problems, or when two files define it; ValueError naming the known
  // ops when no file defines it.
  const OpSpec& spec(std::string_view op) const;

  // Every op name some loaded file defines, sorted.
  std::vector<std::string> names() const;

 private:
  std::vector<LoadedFile> files_;
  std::map<std::string, std::vector<const OpSpec*>, std::less<>> specs_;
};

// The *.yaml files of `directory`, sorted by name; empty when it does not exist.
std::vector<std::filesystem::path> manifest_files_in(const std::filesystem::path& directory);

}  // namespace tileops::manifest
