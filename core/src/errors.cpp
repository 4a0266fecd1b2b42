#include "tileops/errors.hpp"

#include <iterator>
#include <type_traits>

#include "error_family.hpp"

namespace tileops {
namespace {

template <class E>
bool is_instance(const Error& e) {
  if constexpr (std::is_same_v<E, Error>) {
    return true;
  } else {
    return dynamic_cast<const E*>(&e) != nullptr;
  }
}

template <class E>
std::exception_ptr with_message(const Error&, const std::string& message) {
  return std::make_exception_ptr(E(message));
}

template <>
std::exception_ptr with_message<ManifestError>(const Error& original, const std::string& message) {
  return std::make_exception_ptr(
      ManifestError(message, static_cast<const ManifestError&>(original).problems()));
}

template <class E>
constexpr ErrorClass entry(std::string_view name) {
  return {name, is_instance<E>, with_message<E>};
}

// Most derived first: every class precedes the classes it derives from, so the first entry
// whose is_instance holds names an error's most derived class. Error, the root, comes last.
constexpr ErrorClass kFamily[] = {
    entry<ConfigError>("ConfigError"),
    entry<UnknownTargetError>("UnknownTargetError"),
    entry<ManifestError>("ManifestError"),
    entry<OutOfMemoryError>("OutOfMemoryError"),
    entry<OpNotAvailableError>("OpNotAvailableError"),
    entry<AmbiguousTargetError>("AmbiguousTargetError"),
    entry<BackendError>("BackendError"),
    entry<TypeError>("TypeError"),
    entry<ValueError>("ValueError"),
    entry<RuntimeError>("RuntimeError"),
    entry<Error>("Error"),
};

}  // namespace

const ErrorClass& error_class_of(const Error& e) {
  for (const ErrorClass& c : kFamily) {
    if (c.is_instance(e)) return c;
  }
  return kFamily[std::size(kFamily) - 1];
}

std::string_view error_kind(const Error& e) { return error_class_of(e).name; }

}  // namespace tileops
