#include "manifest/manifest_error.hpp"

namespace tileops::manifest {
namespace {

std::string joined(const std::vector<Problem>& problems) {
  std::string s;
  for (const Problem& p : problems) s += (s.empty() ? "" : "; ") + p.str();
  return s;
}

}  // namespace

ManifestError::ManifestError(std::vector<Problem> problems)
    : ValueError(joined(problems)), problems_(std::move(problems)) {}

ManifestError::ManifestError(const std::string& message, std::vector<Problem> problems)
    : ValueError(message), problems_(std::move(problems)) {}

}  // namespace tileops::manifest
