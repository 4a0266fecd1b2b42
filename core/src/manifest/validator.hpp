// The manifest validator: every static check a spec must pass, over whole files.
#pragma once

#include <filesystem>
#include <vector>

#include "manifest/manifest_error.hpp"
#include "tileops/export.hpp"

namespace tileops::manifest {

struct ValidationReport {
  int files = 0;
  int ops = 0;                     // entries that loaded (well-formed or not past loading)
  std::vector<Problem> problems;   // in file order
};

// Validates the manifest files at `paths` (files, or directories whose *.yaml files are
// taken); with no paths, the built-in manifests. Checks each file's YAML and fields, that each
// entry's family matches its file name (<family>.yaml or <family>_<shard>.yaml), that no op is
// defined twice, every entry's signature, effects, workloads and composition (see
// signature/plan_builder.hpp), and that composition stages name known ops (the validated ones
// and the built-in ones). Never throws for a malformed manifest.
TILEOPS_API ValidationReport validate_manifests(const std::vector<std::filesystem::path>& paths);

}  // namespace tileops::manifest
