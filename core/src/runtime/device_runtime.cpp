#include "tileops/extend/device_runtime.hpp"

#include <algorithm>
#include <mutex>
#include <shared_mutex>

#include "backend/registry.hpp"
#include "runtime/host_runtimes.hpp"
#include "runtime/runtime_call.hpp"
#include "runtime/runtime_registry.hpp"
#include "tileops/errors.hpp"

namespace tileops {

DeviceRuntime::~DeviceRuntime() = default;
void DeviceRuntime::synchronize(int) {}
int DeviceRuntime::current_device() const { return 0; }
void DeviceRuntime::set_current_device(int index) {
  if (index < 0 || index >= device_count()) {
    throw ValueError("cannot make " + std::string(type().name()) + ":" + std::to_string(index) +
                     " current: the process sees " + std::to_string(device_count()) + " such device(s)");
  }
}
void* DeviceRuntime::current_stream(int) const { return nullptr; }
void DeviceRuntime::set_current_stream(int index, void* stream) {
  if (stream != nullptr) {
    const std::string name(type().name());
    throw ValueError("device type '" + name + "' has no streams: " + name + ":" + std::to_string(index) +
                     " takes only the default stream (nullptr) as its current stream");
  }
}
void* DeviceRuntime::allocate_async(std::size_t nbytes, int index, void*) { return allocate(nbytes, index); }
void DeviceRuntime::deallocate_async(void* ptr, std::size_t nbytes, int index, void*) noexcept {
  deallocate(ptr, nbytes, index);
}
bool DeviceRuntime::copy_strided(const StridedCopy&, int) { return false; }

bool DeviceRuntime::copy_between_devices(void*, int, const void*, int, std::size_t) { return false; }
[[noreturn]] static void throw_no_graphs(const DeviceRuntime& rt, int index) {
  throw OpNotAvailableError("device graphs are not available on " + std::string(rt.type().name()) + ":" +
                            std::to_string(index) + ": its runtime cannot record work for replay");
}
void* DeviceRuntime::begin_capture(int index, void*) { throw_no_graphs(*this, index); }
void* DeviceRuntime::end_capture(int index, void*) { throw_no_graphs(*this, index); }
void DeviceRuntime::cancel_capture(int, void*) noexcept {}
void DeviceRuntime::launch_graph(void*, int index, void*) { throw_no_graphs(*this, index); }
void DeviceRuntime::destroy_graph(void*, int) noexcept {}
bool DeviceRuntime::host_accessible() const { return false; }
bool DeviceRuntime::is_accelerator() const { return false; }

std::string runtime_fault_where(const DeviceRuntime& runtime, const char* function) {
  const DeviceType type = runtime.type();
  return std::string(function) + " of the device runtime for '" + std::string(type.name()) + "' (" +
         backend::runtime_owner(type) + ")";
}

namespace {

struct RuntimeRegistry {
  std::shared_mutex mutex;
  std::vector<std::shared_ptr<DeviceRuntime>> runtimes;

  RuntimeRegistry() {
    runtimes.push_back(make_cpu_runtime());
    runtimes.push_back(make_meta_runtime());
  }
};

RuntimeRegistry& registry() {
  static RuntimeRegistry r;
  return r;
}

}  // namespace

[[noreturn]] void throw_no_runtime(DeviceType type);

std::shared_ptr<DeviceRuntime> device_runtime_shared(DeviceType type) {
  // The cpu runtime is registered first and kept for the process (the reference below is never
  // released), so host tensors skip the lock and hold it without a reference count that every
  // thread allocating host memory would write.
  static const std::shared_ptr<DeviceRuntime>* const kept = new std::shared_ptr<DeviceRuntime>(registry().runtimes.front());
  static const std::shared_ptr<DeviceRuntime> cpu(std::shared_ptr<void>(), kept->get());
  if (type == DeviceType::cpu()) return cpu;
  RuntimeRegistry& r = registry();
  {
    std::shared_lock lock(r.mutex);
    for (const auto& rt : r.runtimes) {
      if (rt->type() == type) return rt;
    }
  }
  throw_no_runtime(type);
}

void register_device_runtime(std::shared_ptr<DeviceRuntime> runtime) {
  if (!runtime) throw BackendError("register_device_runtime: the runtime is null");
  RuntimeRegistry& r = registry();
  std::unique_lock lock(r.mutex);
  for (const auto& existing : r.runtimes) {
    if (existing->type() == runtime->type()) {
      throw BackendError("a device runtime for '" + std::string(runtime->type().name()) +
                         "' is already registered");
    }
  }
  r.runtimes.push_back(std::move(runtime));
}

bool unregister_device_runtime(DeviceType type) {
  RuntimeRegistry& r = registry();
  std::unique_lock lock(r.mutex);
  auto it = std::find_if(r.runtimes.begin(), r.runtimes.end(), [&](const auto& rt) { return rt->type() == type; });
  if (it == r.runtimes.end() || type == DeviceType::cpu() || type == DeviceType::meta()) return false;
  r.runtimes.erase(it);
  return true;
}

DeviceRuntime* find_device_runtime(DeviceType type) {
  RuntimeRegistry& r = registry();
  std::shared_lock lock(r.mutex);
  for (const auto& rt : r.runtimes) {
    if (rt->type() == type) return rt.get();
  }
  return nullptr;
}

DeviceRuntime& device_runtime(DeviceType type) {
  if (DeviceRuntime* rt = find_device_runtime(type)) return *rt;
  throw_no_runtime(type);
}

[[noreturn]] void throw_no_runtime(DeviceType type) {
  std::string known;
  for (const auto& rt : device_runtimes()) {
    if (!known.empty()) known += ", ";
    known += rt->type().name();
  }
  throw OpNotAvailableError("no device runtime is registered for device type '" + std::string(type.name()) +
                            "'; registered: " + known + " (is its plugin loaded?)");
}

std::vector<std::shared_ptr<DeviceRuntime>> device_runtimes() {
  RuntimeRegistry& r = registry();
  std::shared_lock lock(r.mutex);
  return r.runtimes;
}

DeviceRuntime* process_accelerator() {
  RuntimeRegistry& r = registry();
  std::shared_lock lock(r.mutex);
  for (const auto& rt : r.runtimes) {
    if (rt->is_accelerator() && call_runtime(*rt, "device_count", [&] { return rt->device_count(); }) > 0) return rt.get();
  }
  return nullptr;
}

std::optional<Device> accelerator_current_device() {
  DeviceRuntime* rt = process_accelerator();
  if (rt == nullptr) return std::nullopt;
  return Device(rt->type(), call_runtime(*rt, "current_device", [&] { return rt->current_device(); }));
}

}  // namespace tileops
