#include "tileops/errors.hpp"

#include "manifest/manifest_error.hpp"

namespace tileops {

std::string_view error_kind(const Error& e) {
  // Most derived first: each class is checked before the classes it derives from.
  if (dynamic_cast<const ConfigError*>(&e)) return "ConfigError";
  if (dynamic_cast<const UnknownTargetError*>(&e)) return "UnknownTargetError";
  if (dynamic_cast<const manifest::ManifestError*>(&e)) return "ManifestError";
  if (dynamic_cast<const OutOfMemoryError*>(&e)) return "OutOfMemoryError";
  if (dynamic_cast<const OpNotAvailableError*>(&e)) return "OpNotAvailableError";
  if (dynamic_cast<const AmbiguousTargetError*>(&e)) return "AmbiguousTargetError";
  if (dynamic_cast<const BackendError*>(&e)) return "BackendError";
  if (dynamic_cast<const TypeError*>(&e)) return "TypeError";
  if (dynamic_cast<const ValueError*>(&e)) return "ValueError";
  if (dynamic_cast<const RuntimeError*>(&e)) return "RuntimeError";
  return "Error";
}

}  // namespace tileops
