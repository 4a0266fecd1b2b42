// Calls into code that a backend brought: a plugin's (or the application's) detectors,
// builders, target kernels, refusals, entry_for, kernel constructors and kernels, and device
// runtimes. A tileops::Error passes unchanged; anything else (a std::exception of another kind,
// or a value that is no std::exception at all, `throw 42`) becomes a BackendError that names
// where it was thrown and keeps the original message, so that the caller's failure handling
// (and the binding's undo) runs and the user learns whose code failed. Thread cancellation passes
// unchanged. The try block costs nothing until something throws; `where` is called only then.
#pragma once

#include <cxxabi.h>

#include <string>
#include <utility>

#include "tileops/errors.hpp"

namespace tileops {

// Inside a catch handler: throws BackendError "<where> threw <type>: <message>" for the
// exception being handled.
[[noreturn]] void throw_backend_fault(const std::string& where);

// Throws an exception of `e`'s kind (its most derived class of the public family) whose
// message is "<where> failed: <e's message>": a backend's tileops error, told whose code it came
// from.
[[noreturn]] void rethrow_with_where(const Error& e, const std::string& where);

template <class Body, class Where>
decltype(auto) call_backend(Body&& body, Where&& where) {
  try {
    return std::forward<Body>(body)();
  } catch (const Error&) {
    throw;
  } catch (const abi::__forced_unwind&) {
    throw;
  } catch (...) {
    throw_backend_fault(where());
  }
}

}  // namespace tileops
