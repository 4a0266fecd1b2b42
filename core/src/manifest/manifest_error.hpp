// Problems found in manifests: where (file, op, field) and why.
#pragma once

#include <string>
#include <vector>

#include "tileops/errors.hpp"
#include "tileops/export.hpp"

namespace tileops::manifest {

struct Problem {
  std::string file;   // manifest file name
  std::string op;     // op name, or "(file)" for a problem of the whole file
  std::string field;  // dotted path, e.g. "signature.inputs.x.shape" or "workloads[2]"
  std::string reason;

  // "file: op: field: reason".
  std::string str() const { return file + ": " + op + ": " + field + ": " + reason; }
};

// A malformed manifest entry. what() is "file: op: field: reason" (several problems are
// joined with "; ").
class TILEOPS_API ManifestError : public ValueError {
 public:
  explicit ManifestError(std::vector<Problem> problems);
  // The same problems under another message (one that says where they were met).
  ManifestError(const std::string& message, std::vector<Problem> problems);
  const std::vector<Problem>& problems() const { return problems_; }

 private:
  std::vector<Problem> problems_;
};

}  // namespace tileops::manifest
