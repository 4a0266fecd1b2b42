#include "plugin/backend_call.hpp"

#include <exception>
#include <typeinfo>

#include "tileops/extend/kernel.hpp"

namespace tileops {

void throw_backend_fault(const std::string& where) {
  std::string what;
  try {
    throw;
  } catch (const std::exception& e) {
    what = demangle(typeid(e)) + ": " + e.what();
  } catch (...) {
    const std::type_info* type = abi::__cxa_current_exception_type();
    what = (type != nullptr ? demangle(*type) : std::string("an unknown type")) +
           ", which does not derive from std::exception";
  }
  throw BackendError(where + " threw " + what);
}

void rethrow_with_where(const Error& e, const std::string& where) {
  const std::string message = where + " failed: " + e.what();
  // Most derived first: each class below derives from one further down.
  if (dynamic_cast<const ConfigError*>(&e)) throw ConfigError(message);
  if (dynamic_cast<const UnknownTargetError*>(&e)) throw UnknownTargetError(message);
  if (dynamic_cast<const ValueError*>(&e)) throw ValueError(message);
  if (dynamic_cast<const TypeError*>(&e)) throw TypeError(message);
  if (dynamic_cast<const OutOfMemoryError*>(&e)) throw OutOfMemoryError(message);
  if (dynamic_cast<const OpNotAvailableError*>(&e)) throw OpNotAvailableError(message);
  if (dynamic_cast<const AmbiguousTargetError*>(&e)) throw AmbiguousTargetError(message);
  if (dynamic_cast<const BackendError*>(&e)) throw BackendError(message);
  if (dynamic_cast<const RuntimeError*>(&e)) throw RuntimeError(message);
  throw Error(message);
}

}  // namespace tileops
