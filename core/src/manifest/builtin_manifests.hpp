// The manifests compiled into libtileops: every manifests/*.yaml of the source tree, embedded
// as text by a build step (cmake/TileopsEmbedManifests.cmake). No file is read at run time.
#pragma once

#include <span>
#include <string_view>

namespace tileops::manifest {

struct ManifestSource {
  std::string_view name;  // "manifests/norm.yaml"
  std::string_view text;
};

// The embedded manifest files, sorted by name.
std::span<const ManifestSource> builtin_manifest_sources();

}  // namespace tileops::manifest
