#include "tileops/errors.hpp"

namespace tileops {
namespace {

std::string joined(const std::vector<ManifestProblem>& problems) {
  std::string s;
  for (const ManifestProblem& p : problems) s += (s.empty() ? "" : "; ") + p.str();
  return s;
}

}  // namespace

ManifestError::ManifestError(std::vector<ManifestProblem> problems)
    : ValueError(joined(problems)), problems_(std::move(problems)) {}

ManifestError::ManifestError(const std::string& message, std::vector<ManifestProblem> problems)
    : ValueError(message), problems_(std::move(problems)) {}

}  // namespace tileops
