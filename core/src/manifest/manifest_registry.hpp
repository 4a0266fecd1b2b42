// The op specs a process knows: the built-in manifests, the manifests programs embed (an
// application's ops from tileops_add_ops), then every *.yaml in the config's manifest_path
// directories.
#pragma once

#include <deque>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tileops/errors.hpp"
#include "manifest/manifest_loader.hpp"

namespace tileops::manifest {

class ManifestRegistry {
 public:
  // Never throws for malformed files: their problems are kept, and those of whole files (one
  // that cannot be read, a directory that cannot be listed) are also logged as warnings.
  // Loads the built-in manifests, `embedded` (the manifests programs embedded so far, as
  // name and text) and each directory's *.yaml files (load_manifest_directory).
  ManifestRegistry(const std::vector<std::filesystem::path>& directories,
                   const std::vector<std::pair<std::string, std::string>>& embedded = {});

  // Adds a manifest a program embeds, after the registry loaded.
  void add_embedded(const std::string& name, const std::string& text);

  // The spec named `op`. Throws ManifestError when its entry (or, if the name is found nowhere,
  // any unreadable file) has problems, or when two files define it, unless one of them is
  // embedded and every definition says the same (a program's copy of a file on the path); the
  // error then says the op is defined differently. ValueError naming the known ops when no
  // file defines it.
  const OpSpec& spec(std::string_view op) const;

  // Every op name some loaded file defines, sorted.
  std::vector<std::string> names() const;

 private:
  void index(const LoadedFile& file);

  // A deque, so that adding a file leaves the specs of the others where specs_ points.
  std::deque<LoadedFile> files_;
  std::map<std::string, std::vector<const OpSpec*>, std::less<>> specs_;
  std::set<std::string, std::less<>> embedded_files_;
};

// Every *.yaml entry of `directory`, loaded in name order; an entry that is not a regular file
// (a FIFO, a device, a symbolic link loop) is a "(file)" problem of that entry, as
// load_manifest_file reports it. A missing directory loads nothing; a path that is not a
// directory, or a directory that cannot be listed, is one "(file)" problem. Never throws for a
// problem of the files.
std::vector<LoadedFile> load_manifest_directory(const std::filesystem::path& directory);

}  // namespace tileops::manifest
