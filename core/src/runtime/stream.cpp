#include "tileops/stream.hpp"

#include "runtime/runtime_call.hpp"
#include "tileops/extend/device_runtime.hpp"

namespace tileops {

void* current_stream(const Device& device) {
  DeviceRuntime& rt = device_runtime(device.type());
  return call_runtime(rt, "current_stream", [&] { return rt.current_stream(device.index()); });
}

StreamGuard::StreamGuard(const Device& device, void* stream) : device_(device), stream_(stream) {
  DeviceRuntime& rt = device_runtime(device.type());
  call_runtime(rt, "set_current_stream", [&] {
    previous_ = rt.current_stream(device.index());
    rt.set_current_stream(device.index(), stream);
  });
}

StreamGuard::~StreamGuard() {
  // The runtime accepted this device and the previous stream before: restoring cannot fail.
  device_runtime(device_.type()).set_current_stream(device_.index(), previous_);
}

}  // namespace tileops
