// Device runtimes: what "supporting a device type" means. The core provides the `cpu` and
// `meta` runtimes; plugins register others (cuda, hip, a vendor's own).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tileops/device.hpp"
#include "tileops/export.hpp"
#include "tileops/shape.hpp"

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

  // Stream-ordered allocation: memory that work queued on `stream` (a native stream handle of
  // device `index`, as current_stream() returns) may use at once, and that deallocate_async
  // releases in that stream's order, so neither waits for the device. Storage::allocate uses
  // these with the calling thread's current stream and frees on the stream it allocated on.
  // The defaults ignore the stream and call allocate() / deallocate().
  virtual void* allocate_async(std::size_t nbytes, int index, void* stream);
  virtual void deallocate_async(void* ptr, std::size_t nbytes, int index, void* stream) noexcept;

  // Copies between host memory and device `index` of this runtime, or within the device.
  virtual void copy_to_host(void* host_dst, const void* src, std::size_t nbytes, int index) = 0;
  virtual void copy_from_host(void* dst, const void* host_src, std::size_t nbytes, int index) = 0;
  virtual void copy_on_device(void* dst, const void* src, std::size_t nbytes, int index) = 0;

  // A copy between two strided views of memory on device `index`, element by element in
  // row-major order of `shape` (strides in elements, each of `element_size` bytes). Returns
  // false, having done nothing, when the runtime has no such copy; Tensor::copy_from then goes
  // through the host. The default returns false.
  struct StridedCopy {
    void* dst;
    const void* src;
    ShapeView shape;
    ShapeView dst_strides;
    ShapeView src_strides;
    std::size_t element_size;
  };
  virtual bool copy_strided(const StridedCopy& copy, int index);

  // Copies `nbytes` from device `src_index` to device `dst_index` of this runtime (a peer
  // copy), ordered after the work queued on both devices' current streams and finished when it
  // returns, as copy_to_host is. Returns false, having done nothing, when the runtime has no
  // such copy; Tensor::copy_from then goes through the host. The default returns false.
  virtual bool copy_between_devices(void* dst, int dst_index, const void* src, int src_index, std::size_t nbytes);

  // Waits for all work queued on device `index`.
  virtual void synchronize(int index);
  // The device new work goes to on the calling thread, and how to change it.
  virtual int current_device() const;
  virtual void set_current_device(int index);
  // The native stream handle (cudaStream_t, hipStream_t) the calling thread queues work for
  // device `index` on: the last one set_current_stream() made current on this thread, else the
  // device's default stream. nullptr is the default stream (and the only stream of runtimes
  // without streams).
  virtual void* current_stream(int index) const;
  // Makes `stream` the calling thread's current stream of device `index` (nullptr: the default
  // stream). The stream must belong to that device and outlive every tensor allocated while it
  // is current (their memory is released in its order). Runtimes without streams accept only
  // nullptr and throw ValueError otherwise. Prefer StreamGuard (tileops/stream.hpp).
  virtual void set_current_stream(int index, void* stream);

  // Device graphs: the work queued on a stream recorded once and replayed with one launch
  // (CUDA graphs, HIP graphs); tileops::DeviceGraph (tileops/device_graph.hpp) drives them. A
  // runtime with graphs overrides all five; the defaults throw OpNotAvailableError (and
  // cancel_capture / destroy_graph do nothing).
  //
  // begin_capture starts recording the work the calling thread queues on `stream` of device
  // `index` (nullptr: a stream the runtime owns, as a default stream cannot be recorded) and
  // returns the stream it records, which the caller makes current until end_capture or
  // cancel_capture. Allocations from the stream-ordered pool become part of the graph; a
  // call that waits for the device or the stream while it records throws RuntimeError.
  virtual void* begin_capture(int index, void* stream);
  // Ends the recording on `stream` and returns the executable graph, whose allocations not
  // freed inside it are freed again before each replay (their addresses stay the same).
  // Throws RuntimeError, having discarded the recording, when it was broken (by a call not
  // allowed while recording, such as an allocation outside the pool or a synchronisation).
  virtual void* end_capture(int index, void* stream);
  // Ends a recording after an error and discards it.
  virtual void cancel_capture(int index, void* stream) noexcept;
  // Queues one replay of `graph` (from end_capture on device `index`) on `stream`; replays of
  // one graph run one after another.
  virtual void launch_graph(void* graph, int index, void* stream);
  // Releases `graph` once the replays queued before have finished with it.
  virtual void destroy_graph(void* graph, int index) noexcept;

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
