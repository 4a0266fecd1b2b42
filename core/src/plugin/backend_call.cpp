#include "plugin/backend_call.hpp"

#include <exception>
#include <typeinfo>

#include "error_family.hpp"
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
  std::rethrow_exception(error_class_of(e).with_message(e, where + " failed: " + e.what()));
}

}  // namespace tileops
