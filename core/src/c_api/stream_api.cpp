// The calling thread's current stream per device, and waiting for a device.
#include "c_api/handles.hpp"
#include "runtime/runtime_call.hpp"
#include "tileops/extend/device_runtime.hpp"
#include "tileops/stream.hpp"
#include "tileops/target.hpp"

using namespace tileops;
using namespace tileops::c_api;

extern "C" {

tileops_status* tileops_current_stream(const char* device, void** stream) {
  return guarded([&] {
    require_pointer(stream, "stream");
    *stream = nullptr;
    const Device where = Device::parse(checked_string(device, "device"));
    load_backends();
    *stream = current_stream(where);
  });
}

tileops_status* tileops_set_current_stream(const char* device, void* stream, void** previous) {
  return guarded([&] {
    if (previous != nullptr) *previous = nullptr;
    const Device where = Device::parse(checked_string(device, "device"));
    load_backends();
    DeviceRuntime& runtime = device_runtime(where.type());
    void* replaced = nullptr;
    call_runtime(runtime, "set_current_stream", [&] {
      replaced = runtime.current_stream(where.index());
      runtime.set_current_stream(where.index(), stream);
    });
    if (previous != nullptr) *previous = replaced;
  });
}

tileops_status* tileops_synchronize(const char* device) {
  return guarded([&] {
    const std::string_view name = checked_string(device, "device");
    const Device where = Device::parse(name);
    load_backends();
    DeviceRuntime& runtime = device_runtime(where.type());
    int count = 0;
    call_runtime(runtime, "device_count", [&] { count = runtime.device_count(); });
    if (where.index() >= count) {
      throw ValueError("cannot wait for " + std::string(name) + ": the " + std::string(where.type().name()) +
                       " runtime has " + std::to_string(count) + " device(s)");
    }
    call_runtime(runtime, "synchronize", [&] { runtime.synchronize(where.index()); });
  });
}

}  // extern "C"
