// Device runtimes: what "supporting a device type" means. The core provides the `cpu` and
// `meta` runtimes; plugins register others (cuda, hip, a vendor's own).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tileops/device.hpp"
#include "tileops/export.hpp"

namespace tileops {

// Properties of one device that kernel selection may read (on a cache miss only).
struct DeviceFacts {
  int arch = 0;                   // e.g. 90 for sm_90; 0 where the notion does not apply
  int sm_count = 0;               // multiprocessors, or CPU cores for the cpu runtime
  std::size_t smem_budget = 0;    // shared memory per block in bytes; 0 where not applicable
  std::string name;               // human-readable model name
};

// One device type's memory and execution services. Implementations must be thread-safe.
class TILEOPS_API DeviceRuntime {
 public:
  virtual ~DeviceRuntime();

  virtual DeviceType type() const = 0;
  // Devices of this type visible to the process; 0 when the driver finds none.
  virtual int device_count() const = 0;
  // Facts about device `index` (0 <= index < device_count()). May query the driver: callers
  // read it only on cache misses.
  virtual DeviceFacts facts(int index) const = 0;

  // Allocates `nbytes` on device `index`; returns nullptr only for nbytes == 0. Throws
  // OutOfMemoryError (a RuntimeError) naming the device and the bytes when the device cannot
  // provide the memory; Storage::allocate also turns a std::bad_alloc into one.
  virtual void* allocate(std::size_t nbytes, int index) = 0;
  // Releases memory from allocate(). Never throws.
  virtual void deallocate(void* ptr, std::size_t nbytes, int index) noexcept = 0;

  // Copies between host memory and device `index` of this runtime, or within the device.
  virtual void copy_to_host(void* host_dst, const void* src, std::size_t nbytes, int index) = 0;
  virtual void copy_from_host(void* dst, const void* host_src, std::size_t nbytes, int index) = 0;
  virtual void copy_on_device(void* dst, const void* src, std::size_t nbytes, int index) = 0;

  // Waits for all work queued on device `index`.
  virtual void synchronize(int index);
  // The device new work goes to on the calling thread, and how to change it.
  virtual int current_device() const;
  virtual void set_current_device(int index);
  // The native stream handle work is queued on (cudaStream_t, hipStream_t), or nullptr.
  virtual void* current_stream(int index) const;

  // True for runtimes whose memory the host may dereference directly (cpu, host-backed
  // vendor devices).
  virtual bool host_accessible() const;
  // True for accelerator runtimes (cuda, hip): the process accelerator is the first such
  // runtime that has at least one device.
  virtual bool is_accelerator() const;
};

// Registers `runtime` for its device type. Throws BackendError when the type already has one.
TILEOPS_API void register_device_runtime(std::shared_ptr<DeviceRuntime> runtime);
// Removes the runtime registered for `type`; used by the plugin host to roll back a failed
// plugin. Returns false when none was registered.
TILEOPS_API bool unregister_device_runtime(DeviceType type);
// The runtime of `type`. Throws OpNotAvailableError naming the registered types when none is.
TILEOPS_API DeviceRuntime& device_runtime(DeviceType type);
// The runtime of `type`, or nullptr.
TILEOPS_API DeviceRuntime* find_device_runtime(DeviceType type);
// Every registered runtime, cpu and meta first, then in registration order.
TILEOPS_API std::vector<std::shared_ptr<DeviceRuntime>> device_runtimes();

// The process accelerator: the first registered accelerator runtime with a device, or nullptr.
TILEOPS_API DeviceRuntime* process_accelerator();
// The accelerator's current device, or nullopt when the process has no accelerator.
TILEOPS_API std::optional<Device> accelerator_current_device();

}  // namespace tileops
