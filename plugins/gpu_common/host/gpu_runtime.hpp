// The device runtime of the GPU plugins ("cuda", or "hip" when built with TILEOPS_GPU_HIP),
// one source for both vendors through vendor_api.hpp:
// - memory comes from each device's stream-ordered pool (cudaMallocFromPoolAsync on the
//   device's default pool, which keeps what it is given back), so that a warm call allocates
//   without cudaMalloc and frees without waiting for the device; on the default stream a thread
//   first reuses the blocks it freed there itself (block_cache.hpp), without a pool operation;
// - each thread has a current stream per device (set_current_stream, StreamGuard); kernels,
//   allocations and copies go to it;
// - copies to and from the host are ordered on the current stream and wait for that stream
//   only, never for the whole device;
// - device graphs record a stream in thread-local mode (the calling thread may not make calls
//   that are not allowed while recording; other threads may); the default stream cannot be
//   recorded, so its work is recorded on a stream of the runtime's own, one recording at a
//   time per device. While this thread records, or while its current stream is recorded,
//   copies to and from the host and synchronize() throw RuntimeError instead of waiting.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "fault_record.hpp"
#include "tileops/extend/device_runtime.hpp"

namespace tileops::gpu {

class GpuRuntime final : public DeviceRuntime {
 public:
  GpuRuntime();
  ~GpuRuntime() override;

  DeviceType type() const override { return type_; }
  // Queries the driver on the first call only, so that loading the plugin does not pay for
  // the driver's initialisation (about 200 ms); without a driver or a GPU it is 0.
  int device_count() const override;
  DeviceFacts facts(int index) const override;
  void* allocate(std::size_t nbytes, int index) override;
  void deallocate(void* ptr, std::size_t nbytes, int index) noexcept override;
  void* allocate_async(std::size_t nbytes, int index, void* stream) override;
  void deallocate_async(void* ptr, std::size_t nbytes, int index, void* stream) noexcept override;
  void copy_to_host(void* dst, const void* src, std::size_t nbytes, int index) override;
  void copy_from_host(void* dst, const void* src, std::size_t nbytes, int index) override;
  void copy_on_device(void* dst, const void* src, std::size_t nbytes, int index) override;
  // Returns false (Tensor::copy_from then copies through the host) where this build's kernels
  // have no device code for the device's architecture (kKernelArchs).
  bool copy_strided(const StridedCopy& copy, int index) override;
  bool copy_between_devices(void* dst, int dst_index, const void* src, int src_index, std::size_t nbytes) override;
  void synchronize(int index) override;
  int current_device() const override;
  void set_current_device(int index) override;
  void* current_stream(int index) const override;
  void set_current_stream(int index, void* stream) override;
  void* begin_capture(int index, void* stream) override;
  void* end_capture(int index, void* stream) override;
  void cancel_capture(int index, void* stream) noexcept override;
  void launch_graph(void* graph, int index, void* stream) override;
  void destroy_graph(void* graph, int index) noexcept override;
  bool is_accelerator() const override { return true; }

  // Throws ValueError unless 0 <= index < device_count().
  void check_index(int index, const char* what) const;

  // Threads of a warp (wavefront) on device `index`, as its runtime reports them: 32 on
  // NVIDIA GPUs and AMD RDNA, 64 on AMD CDNA. Read from the driver with facts(); throws
  // RuntimeError for a width the kernels are not written for (not 32 or 64).
  int warp_size(int index) const;

  // Device `index`'s fault record (fault_record.hpp) as its kernels address it: host memory
  // mapped into the device, set up with the device's pool and kept for the process.
  FaultRecord* fault_record(int index) const;
  // Throws ValueError describing the fault a kernel recorded on device `index`, and clears the
  // record; returns when there is none. Reads host memory only: it never waits for the device,
  // so it reports what kernels that already ran found. The kernels that read indices from
  // device memory call it before they launch, and synchronize() and copy_to_host() after they
  // wait.
  void raise_pending_fault(int index) const;

 private:
  struct DeviceState;
  DeviceState& state(int index) const;            // the device's pool, set up on first use
  const DeviceFacts& cached_facts(int index) const;  // read from the driver on the first call
  // Throws RuntimeError when waiting (for `what`) would break a recording: this thread
  // records, or `stream` is being recorded.
  void refuse_wait_while_recording(void* stream, const char* what, int index) const;
  // Leaves the recording begun on `stream` (the bookkeeping of begin_capture).
  void leave_capture(int index, void* stream) noexcept;
  // Lets the next recording use the runtime's own stream when `stream` is it.
  void release_capture_stream(int index, void* stream) noexcept;

  DeviceType type_;
  mutable std::once_flag count_once_;
  mutable int count_ = 0;
  mutable std::once_flag facts_once_;
  mutable std::vector<DeviceFacts> facts_;
  mutable std::vector<int> warp_sizes_;  // per device, read with facts_
  mutable std::unique_ptr<DeviceState[]> states_;
};

// The plugin's runtime, created on first use (the plugin registers it when it loads).
std::shared_ptr<GpuRuntime> runtime();

// Makes device `index` current on the calling thread for the guard's lifetime when it is not
// already (a launch goes to the current device's streams).
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_;
  bool switched_ = false;
};

}  // namespace tileops::gpu
