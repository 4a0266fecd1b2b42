// Calls into a device runtime, which a plugin may have brought: see plugin/backend_call.hpp.
#pragma once

#include <string>
#include <utility>

#include "plugin/backend_call.hpp"
#include "tileops/extend/device_runtime.hpp"

namespace tileops {

// "<function> of the device runtime for '<type>' (<who registered it>)", for messages.
std::string runtime_fault_where(const DeviceRuntime& runtime, const char* function);

// Runs `body`, a call of `function` on `runtime`, converting what it throws like call_backend.
template <class Body>
decltype(auto) call_runtime(const DeviceRuntime& runtime, const char* function, Body&& body) {
  return call_backend(std::forward<Body>(body), [&] { return runtime_fault_where(runtime, function); });
}

}  // namespace tileops
