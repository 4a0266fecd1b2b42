// Reads manifest YAML (a mapping from op class name to spec) into OpSpecs. Strict: unknown
// fields, fields of the wrong YAML type and malformed values are problems. An entry with any
// problem is left out whole; the other entries of the file still load.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/errors.hpp"
#include "manifest/op_spec.hpp"

namespace tileops::manifest {

struct LoadedFile {
  std::string file;
  std::vector<OpSpec> specs;      // the entries that parsed cleanly, in file order
  std::vector<ManifestProblem> problems;  // one per malformed field; "(file)" problems for the whole file
};

// Parses `text` as the manifest file named `file` (the name only labels problems).
LoadedFile load_manifest_text(std::string_view text, const std::string& file);

// Reads and parses `path`; a file that cannot be read (missing, not a regular file, larger
// than kMaxTextFileBytes, a read error) is a "(file)" problem saying why.
LoadedFile load_manifest_file(const std::filesystem::path& path);

}  // namespace tileops::manifest
