#include "gpu_runtime.hpp"

#include <algorithm>
#include <new>
#include <array>
#include <atomic>
#include <thread>
#include <string>

#include "block_cache.hpp"
#include "errors.hpp"
#include "fault_message.hpp"
#include "launchers.hpp"
#include "tileops/errors.hpp"
#include "vendor.hpp"
#include "vendor_api.hpp"

namespace tileops::gpu {
namespace {

// Current streams are per thread and per device; a process with more devices than this keeps
// the default stream on the others.
constexpr int kMaxStreamDevices = 64;
thread_local std::array<void*, kMaxStreamDevices> t_current_streams{};
// Recordings this thread has begun and not yet ended.
thread_local int t_recordings = 0;

api::Stream native(void* stream) { return static_cast<api::Stream>(stream); }

std::string where(int index) { return std::string(api::kVendor) + ":" + std::to_string(index); }

}  // namespace

[[noreturn]] void throw_status(int status, const std::string& what) {
  const auto e = static_cast<api::Error>(status);
  throw RuntimeError(std::string(api::kVendor) + ": " + what + " failed: " + api::error_name(e) + " (" +
                     api::error_string(e) + ")");
}

void check_launch(const char* kernel) {
  const api::Error e = api::get_last_error();
  if (e != api::kSuccess) throw_status(e, std::string("launching kernel ") + kernel);
}

struct GpuRuntime::DeviceState {
  std::once_flag once;
  api::MemPool pool{};
  // The stream that records work queued for the default stream, created on first use and
  // kept for the process (tensors allocated while it recorded are freed on it); one
  // recording at a time uses it.
  std::once_flag capture_stream_once;
  api::Stream capture_stream{};
  std::mutex capture_stream_mutex;
  std::atomic<std::thread::id> capture_stream_owner{};
  FaultRecord* fault_host = nullptr;
  FaultRecord* fault_device = nullptr;
};

GpuRuntime::GpuRuntime() : type_(DeviceType::intern(api::kVendor)) {}
GpuRuntime::~GpuRuntime() = default;

int GpuRuntime::device_count() const {
  std::call_once(count_once_, [this] {
    if (api::device_count(&count_) != api::kSuccess) {
      api::clear_last_error();  // no driver or no device: the runtime reports zero devices
      count_ = 0;
    }
    states_ = std::make_unique<DeviceState[]>(static_cast<std::size_t>(count_));
  });
  return count_;
}

void GpuRuntime::check_index(int index, const char* what) const {
  if (index < 0 || index >= device_count()) {
    throw ValueError(std::string(api::kVendor) + ": " + what + " on " + where(index) + ", but the process sees " +
                     std::to_string(device_count()) + " " + api::kVendor + " device(s)");
  }
}

int GpuRuntime::warp_size(int index) const {
  check_index(index, "warp_size");
  cached_facts(index);
  const int threads = warp_sizes_[static_cast<std::size_t>(index)];
  if (threads != 32 && threads != 64) {
    throw RuntimeError(std::string(api::kVendor) + ": device " + where(index) + " reports warps of " +
                       std::to_string(threads) + " threads; the kernels are written for 32 or 64");
  }
  return threads;
}

GpuRuntime::DeviceState& GpuRuntime::state(int index) const {
  DeviceState& s = states_[static_cast<std::size_t>(index)];
  std::call_once(s.once, [&] {
    check(api::default_pool(&s.pool, index), "getting the default memory pool");
    // The pool keeps memory returned to it instead of releasing it at each synchronisation:
    // a warm call then reuses it without asking the driver.
    check(api::keep_pool_memory(s.pool), "setting the memory pool's release threshold");
    void* host = nullptr;
    void* device = nullptr;
    check(api::host_alloc_mapped(&host, sizeof(FaultRecord)), "allocating the fault record");
    check(api::device_pointer_of_host(&device, host), "mapping the fault record");
    s.fault_host = new (host) FaultRecord{};
    s.fault_device = static_cast<FaultRecord*>(device);
  });
  return s;
}

DeviceFacts GpuRuntime::facts(int index) const {
  check_index(index, "facts");
  return cached_facts(index);
}

const DeviceFacts& GpuRuntime::cached_facts(int index) const {
  std::call_once(facts_once_, [this] {
    std::vector<DeviceFacts> all;  // kept only once every device was read
    std::vector<int> warp_sizes;
    for (int i = 0; i < device_count(); ++i) {
      api::DeviceProp p{};
      check(api::properties(&p, i), "reading device properties");
      all.push_back(api::facts_of(p));
      warp_sizes.push_back(p.warpSize);
    }
    facts_ = std::move(all);
    warp_sizes_ = std::move(warp_sizes);
  });
  return facts_[static_cast<std::size_t>(index)];
}

void* GpuRuntime::allocate(std::size_t nbytes, int index) {
  return allocate_async(nbytes, index, current_stream(index));
}

void GpuRuntime::deallocate(void* ptr, std::size_t nbytes, int index) noexcept {
  deallocate_async(ptr, nbytes, index, current_stream(index));
}

void* GpuRuntime::allocate_async(std::size_t nbytes, int index, void* stream) {
  check_index(index, "allocate");
  if (nbytes == 0) return nullptr;
  if (stream == nullptr) {
    if (void* kept = block_cache::take(nbytes, index)) return kept;
  }
  DeviceState& s = state(index);
  void* p = nullptr;
  api::Error e = api::malloc_from_pool(&p, nbytes, s.pool, native(stream));
  if (e == api::kOutOfMemory) {
    api::clear_last_error();
    block_cache::release(index);
    e = api::malloc_from_pool(&p, nbytes, s.pool, native(stream));
  }
  if (e != api::kSuccess) {
    api::clear_last_error();
    throw_status(e, "allocating " + std::to_string(nbytes) + " bytes on " + where(index));
  }
  return p;
}

void GpuRuntime::deallocate_async(void* ptr, std::size_t nbytes, int index, void* stream) noexcept {
  if (ptr == nullptr) return;
  if (stream == nullptr && block_cache::keep(ptr, nbytes, index)) return;
  // Fails only once the process is tearing the runtime down, when nothing can use the memory.
  if (api::free_async(ptr, native(stream)) != api::kSuccess) api::clear_last_error();
}

void GpuRuntime::refuse_wait_while_recording(void* stream, const char* what, int index) const {
  bool recorded = false;
  const api::Error e = api::is_capturing(native(stream), &recorded);
  if (e != api::kSuccess) api::clear_last_error();
  if (t_recordings == 0 && !recorded && e != api::kCaptureImplicit) return;
  throw RuntimeError(std::string(api::kVendor) + ": " + what + " on " + where(index) +
                     " waits for the device, which a call recorded into a device graph must not do (" +
                     (t_recordings > 0 ? "this thread is recording a graph" : "the current stream is being recorded") +
                     ")");
}

void GpuRuntime::copy_to_host(void* dst, const void* src, std::size_t nbytes, int index) {
  check_index(index, "copy_to_host");
  DeviceGuard device(index);
  refuse_wait_while_recording(current_stream(index), "copying to the host", index);
  const api::Stream s = native(current_stream(index));
  check(api::copy_to_host(dst, src, nbytes, s), "copying to the host");
  check(api::stream_synchronize(s), "waiting for a copy to the host");
  raise_pending_fault(index);
}

void GpuRuntime::copy_from_host(void* dst, const void* src, std::size_t nbytes, int index) {
  check_index(index, "copy_from_host");
  DeviceGuard device(index);
  refuse_wait_while_recording(current_stream(index), "copying from the host", index);
  const api::Stream s = native(current_stream(index));
  check(api::copy_from_host(dst, src, nbytes, s), "copying from the host");
  // The caller may reuse its host memory once this returns, also when it is pinned.
  check(api::stream_synchronize(s), "waiting for a copy from the host");
}

void GpuRuntime::copy_on_device(void* dst, const void* src, std::size_t nbytes, int index) {
  check_index(index, "copy_on_device");
  DeviceGuard device(index);
  check(api::copy_on_device(dst, src, nbytes, native(current_stream(index))), "copying on the device");
}

bool GpuRuntime::copy_between_devices(void* dst, int dst_index, const void* src, int src_index, std::size_t nbytes) {
  check_index(dst_index, "copy_between_devices");
  check_index(src_index, "copy_between_devices");
  refuse_wait_while_recording(current_stream(src_index), "copying between devices", src_index);
  refuse_wait_while_recording(current_stream(dst_index), "copying between devices", dst_index);
  {
    // What the source's stream has queued (the producer of `src`) finishes first.
    DeviceGuard device(src_index);
    check(api::stream_synchronize(native(current_stream(src_index))), "waiting for the source of a copy between devices");
    raise_pending_fault(src_index);
  }
  DeviceGuard device(dst_index);
  const api::Stream s = native(current_stream(dst_index));
  check(api::copy_peer(dst, dst_index, src, src_index, nbytes, s), "copying between devices");
  // Finished on return, so that the source may be released on its own stream at once.
  check(api::stream_synchronize(s), "waiting for a copy between devices");
  return true;
}

bool GpuRuntime::copy_strided(const StridedCopy& copy, int index) {
  check_index(index, "copy_strided");
  if (!kKernelArchs.empty() &&
      std::find(kKernelArchs.begin(), kKernelArchs.end(), cached_facts(index).arch) == kKernelArchs.end()) {
    return false;
  }
  DeviceGuard device(index);
  return launch_strided_copy(copy.dst, copy.src, copy.shape.data(), copy.shape.size(), copy.dst_strides.data(),
                             copy.src_strides.data(), copy.element_size, current_stream(index));
}

void GpuRuntime::synchronize(int index) {
  check_index(index, "synchronize");
  DeviceGuard device(index);
  refuse_wait_while_recording(current_stream(index), "synchronizing", index);
  check(api::device_synchronize(), "synchronizing the device");
  raise_pending_fault(index);
}

FaultRecord* GpuRuntime::fault_record(int index) const {
  check_index(index, "fault_record");
  return state(index).fault_device;
}

void GpuRuntime::raise_pending_fault(int index) const {
  FaultRecord* record = state(index).fault_host;
  if (__atomic_load_n(&record->kind, __ATOMIC_ACQUIRE) == 0) return;
  const FaultRecord seen = *record;
  __atomic_store_n(&record->kind, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&record->claimed, 0, __ATOMIC_RELEASE);
  throw ValueError(describe_fault(seen, where(index)));
}

int GpuRuntime::current_device() const {
  int index = 0;
  check(api::get_device(&index), "reading the current device");
  return index;
}

void GpuRuntime::set_current_device(int index) {
  check_index(index, "set_current_device");
  check(api::set_device(index), "making a device current");
}

void* GpuRuntime::current_stream(int index) const {
  return index >= 0 && index < kMaxStreamDevices ? t_current_streams[static_cast<std::size_t>(index)] : nullptr;
}

void GpuRuntime::set_current_stream(int index, void* stream) {
  check_index(index, "set_current_stream");
  if (index >= kMaxStreamDevices) {
    if (stream == nullptr) return;
    throw ValueError(std::string(api::kVendor) + ": streams can be made current on the first " +
                     std::to_string(kMaxStreamDevices) + " devices only, not on " + where(index));
  }
  t_current_streams[static_cast<std::size_t>(index)] = stream;
}

void* GpuRuntime::begin_capture(int index, void* stream) {
  check_index(index, "begin_capture");
  DeviceGuard device(index);
  if (stream == nullptr) {
    DeviceState& s = state(index);
    std::call_once(s.capture_stream_once,
                   [&] { check(api::create_stream(&s.capture_stream), "creating the stream that records graphs"); });
    if (s.capture_stream_owner.load() == std::this_thread::get_id()) {
      throw RuntimeError(std::string(api::kVendor) + ": this thread is already recording the default stream's work on " +
                         where(index) + "; record a nested graph on a stream of its own (StreamGuard)");
    }
    s.capture_stream_mutex.lock();
    s.capture_stream_owner.store(std::this_thread::get_id());
    stream = s.capture_stream;
  }
  const api::Error e = api::begin_capture(native(stream));
  if (e != api::kSuccess) {
    api::clear_last_error();
    release_capture_stream(index, stream);
    throw_status(e, "starting to record a graph on " + where(index));
  }
  ++t_recordings;
  return stream;
}

void GpuRuntime::leave_capture(int index, void* stream) noexcept {
  --t_recordings;
  release_capture_stream(index, stream);
}

void GpuRuntime::release_capture_stream(int index, void* stream) noexcept {
  DeviceState& s = states_[static_cast<std::size_t>(index)];
  if (stream == s.capture_stream && s.capture_stream_owner.load() == std::this_thread::get_id()) {
    s.capture_stream_owner.store(std::thread::id());
    s.capture_stream_mutex.unlock();
  }
}

void* GpuRuntime::end_capture(int index, void* stream) {
  DeviceGuard device(index);
  api::Graph graph{};
  const api::Error e = api::end_capture(native(stream), &graph);
  leave_capture(index, stream);
  if (e != api::kSuccess) {
    api::clear_last_error();
    if (graph != nullptr) static_cast<void>(api::destroy_graph(graph));
    throw_status(e, "recording a graph on " + where(index) +
                        " (a recorded call made a call that recording does not allow, such as an allocation outside "
                        "the stream-ordered pool or a synchronisation)");
  }
  api::GraphExec exec{};
  const api::Error ie = api::instantiate(&exec, graph);
  static_cast<void>(api::destroy_graph(graph));
  if (ie != api::kSuccess) {
    api::clear_last_error();
    throw_status(ie, "instantiating the graph recorded on " + where(index));
  }
  return exec;
}

void GpuRuntime::cancel_capture(int index, void* stream) noexcept {
  int previous = 0;
  const bool switched = api::get_device(&previous) == api::kSuccess && previous != index &&
                        api::set_device(index) == api::kSuccess;
  api::Graph graph{};
  if (api::end_capture(native(stream), &graph) == api::kSuccess && graph != nullptr) {
    static_cast<void>(api::destroy_graph(graph));
  }
  api::clear_last_error();
  leave_capture(index, stream);
  if (switched) static_cast<void>(api::set_device(previous));
}

void GpuRuntime::launch_graph(void* graph, int index, void* stream) {
  DeviceGuard device(index);
  check(api::launch_graph(static_cast<api::GraphExec>(graph), native(stream)), "launching a graph");
}

void GpuRuntime::destroy_graph(void* graph, int index) noexcept {
  if (api::destroy_graph_exec(static_cast<api::GraphExec>(graph)) != api::kSuccess) api::clear_last_error();
}

std::shared_ptr<GpuRuntime> runtime() {
  static const std::shared_ptr<GpuRuntime> instance = std::make_shared<GpuRuntime>();
  return instance;
}

DeviceGuard::DeviceGuard(int index) {
  check(api::get_device(&previous_), "reading the current device");
  if (previous_ != index) {
    check(api::set_device(index), "making a device current");
    switched_ = true;
  }
}

DeviceGuard::~DeviceGuard() {
  // The previous device was current a moment ago: switching back fails only at teardown.
  if (switched_) static_cast<void>(api::set_device(previous_));
}

}  // namespace tileops::gpu
