// The tileops error family. Every error the library raises derives from tileops::Error,
// which is a std::exception; the subclasses mirror the kinds a caller may want to tell apart.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>
#include <string_view>

#include "tileops/export.hpp"

namespace tileops {

// Root of every error tileops raises. what() is a complete sentence that names what was
// expected and what was seen.
class TILEOPS_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A value of the wrong kind: a dtype outside the declared set, a call spec of the wrong type,
// an implementation that breaks its interface's contract.
class TILEOPS_API TypeError : public Error {
 public:
  using Error::Error;
};

// A value of the right kind but outside its domain: a shape that does not unify, a failed
// refinement, a malformed config value, a preference cycle.
class TILEOPS_API ValueError : public Error {
 public:
  using Error::Error;
};

// A state the caller cannot fix by changing one argument: reading last_call before any call
// completed, a runtime failure of a device.
class TILEOPS_API RuntimeError : public Error {
 public:
  using Error::Error;
};

// A device (the host included) could not provide the memory asked for; the message names the
// device and the byte count.
class TILEOPS_API OutOfMemoryError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

// No implementation can run this op here: no in-tree kernel runs on the device, or the
// selected target has no builder for the op.
class TILEOPS_API OpNotAvailableError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

// Several targets' detectors claim the call's device.
class TILEOPS_API AmbiguousTargetError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

// A target name that no backend registered.
class TILEOPS_API UnknownTargetError : public ValueError {
 public:
  using ValueError::ValueError;
};

// A backend broke the registry's rules: duplicate registration, bad plugin, ABI mismatch.
class TILEOPS_API BackendError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

// A configuration file or variable that cannot be read; the message names the file, the line
// and the key.
class TILEOPS_API ConfigError : public ValueError {
 public:
  using ValueError::ValueError;
};

// One problem of a manifest entry: where (file, op, field) and why.
struct ManifestProblem {
  std::string file;   // manifest file name
  std::string op;     // op name, or "(file)" for a problem of the whole file
  std::string field;  // dotted path, e.g. "signature.inputs.x.shape" or "workloads[2]"
  std::string reason;

  // "file: op: field: reason".
  std::string str() const { return file + ": " + op + ": " + field + ": " + reason; }
};

// A malformed manifest entry, met when an op of that name is defined. what() is
// "file: op: field: reason" (several problems are joined with "; ").
class TILEOPS_API ManifestError : public ValueError {
 public:
  explicit ManifestError(std::vector<ManifestProblem> problems);
  // The same problems under another message (one that says where they were met).
  ManifestError(const std::string& message, std::vector<ManifestProblem> problems);
  const std::vector<ManifestProblem>& problems() const { return problems_; }

 private:
  std::vector<ManifestProblem> problems_;
};

// The name of the most derived class of the family that `e` is an instance of: "TypeError",
// "ConfigError", "ManifestError" (a manifest's problems, a ValueError), ..., or "Error".
TILEOPS_API std::string_view error_kind(const Error& e);

}  // namespace tileops
