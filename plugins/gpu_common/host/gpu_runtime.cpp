#include "gpu_runtime.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "errors.hpp"
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

GpuRuntime::DeviceState& GpuRuntime::state(int index) const {
  DeviceState& s = states_[static_cast<std::size_t>(index)];
  std::call_once(s.once, [&] {
    check(api::default_pool(&s.pool, index), "getting the default memory pool");
    // The pool keeps memory returned to it instead of releasing it at each synchronisation:
    // a warm call then reuses it without asking the driver.
    check(api::keep_pool_memory(s.pool), "setting the memory pool's release threshold");
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
    for (int i = 0; i < device_count(); ++i) {
      api::DeviceProp p{};
      check(api::properties(&p, i), "reading device properties");
      all.push_back(api::facts_of(p));
    }
    facts_ = std::move(all);
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
  DeviceState& s = state(index);
  void* p = nullptr;
  const api::Error e = api::malloc_from_pool(&p, nbytes, s.pool, native(stream));
  if (e != api::kSuccess) {
    api::clear_last_error();
    throw_status(e, "allocating " + std::to_string(nbytes) + " bytes on " + where(index));
  }
  return p;
}

void GpuRuntime::deallocate_async(void* ptr, std::size_t, int index, void* stream) noexcept {
  if (ptr == nullptr) return;
  // Fails only once the process is tearing the runtime down, when nothing can use the memory.
  if (api::free_async(ptr, native(stream)) != api::kSuccess) api::clear_last_error();
}

void GpuRuntime::copy_to_host(void* dst, const void* src, std::size_t nbytes, int index) {
  check_index(index, "copy_to_host");
  DeviceGuard device(index);
  const api::Stream s = native(current_stream(index));
  check(api::copy_to_host(dst, src, nbytes, s), "copying to the host");
  check(api::stream_synchronize(s), "waiting for a copy to the host");
}

void GpuRuntime::copy_from_host(void* dst, const void* src, std::size_t nbytes, int index) {
  check_index(index, "copy_from_host");
  DeviceGuard device(index);
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
  check(api::device_synchronize(), "synchronizing the device");
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
