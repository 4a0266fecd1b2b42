#include "tileops/stream.hpp"

#include "tileops/device_runtime.hpp"

namespace tileops {

void* current_stream(const Device& device) { return device_runtime(device.type()).current_stream(device.index()); }

StreamGuard::StreamGuard(const Device& device, void* stream) : device_(device), stream_(stream) {
  DeviceRuntime& rt = device_runtime(device.type());
  previous_ = rt.current_stream(device.index());
  rt.set_current_stream(device.index(), stream);
}

StreamGuard::~StreamGuard() {
  // The runtime accepted this device and the previous stream before: restoring cannot fail.
  device_runtime(device_.type()).set_current_stream(device_.index(), previous_);
}

}  // namespace tileops
