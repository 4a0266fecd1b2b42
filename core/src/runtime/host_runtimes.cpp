#include "runtime/host_runtimes.hpp"

#include "runtime/host_block_cache.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "logging.hpp"
#include "tileops/checked.hpp"
#include "tileops/errors.hpp"

namespace tileops {
namespace {

// Host allocations are aligned for the widest vector registers (AVX-512) and cache lines.
constexpr std::size_t kHostAlignment = 64;

// TILEOPS_CPU_CACHE_BYTES bounds the bytes kept in freed large blocks (default 4 GiB): decimal
// digits only, at most INT64_MAX; anything else warns and keeps the default.
std::size_t cache_capacity() {
  constexpr std::size_t kDefault = std::size_t{4} << 30;
  const char* v = std::getenv("TILEOPS_CPU_CACHE_BYTES");
  if (v == nullptr || *v == '\0') return kDefault;
  std::int64_t n = 0;
  bool valid = true;
  for (const char* c = v; *c != '\0' && valid; ++c) {
    valid = *c >= '0' && *c <= '9' && mul_fits(n, 10, n) && add_fits(n, *c - '0', n);
  }
  if (valid) return static_cast<std::size_t>(n);
  log().warn("TILEOPS_CPU_CACHE_BYTES='{}' is not a byte count: expected decimal digits, at most {}; using the "
             "default {}",
             v, kMaxTensorBytes, kDefault);
  return kDefault;
}

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "host CPU";
}

class CpuRuntime final : public DeviceRuntime {
 public:
  DeviceType type() const override { return DeviceType::cpu(); }
  int device_count() const override { return 1; }
  DeviceFacts facts(int) const override {
    static const DeviceFacts f = [] {
      DeviceFacts facts;
      facts.sm_count = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      facts.name = cpu_model_name();
      return facts;
    }();
    return f;
  }
  void* allocate(std::size_t nbytes, int) override {
    if (nbytes == 0) return nullptr;
    try {
      return blocks_.allocate(nbytes, kHostAlignment);
    } catch (const std::bad_alloc&) {
      throw OutOfMemoryError("cpu cannot allocate " + std::to_string(nbytes) +
                             " bytes: the host has no free memory block of that size");
    }
  }
  void deallocate(void* ptr, std::size_t nbytes, int) noexcept override { blocks_.deallocate(ptr, nbytes, kHostAlignment); }
  void copy_to_host(void* dst, const void* src, std::size_t n, int) override { std::memmove(dst, src, n); }
  void copy_from_host(void* dst, const void* src, std::size_t n, int) override { std::memmove(dst, src, n); }
  void copy_on_device(void* dst, const void* src, std::size_t n, int) override { std::memmove(dst, src, n); }
  bool host_accessible() const override { return true; }

 private:
  HostBlockCache blocks_{cache_capacity()};
};

class MetaRuntime final : public DeviceRuntime {
 public:
  DeviceType type() const override { return DeviceType::meta(); }
  int device_count() const override { return 1; }
  DeviceFacts facts(int) const override {
    DeviceFacts f;
    f.name = "meta (shapes and dtypes only)";
    return f;
  }
  void* allocate(std::size_t, int) override { return nullptr; }
  void deallocate(void*, std::size_t, int) noexcept override {}
  void copy_to_host(void*, const void*, std::size_t, int) override { no_data(); }
  void copy_from_host(void*, const void*, std::size_t, int) override { no_data(); }
  void copy_on_device(void*, const void*, std::size_t, int) override {}

 private:
  [[noreturn]] static void no_data() {
    throw RuntimeError("meta tensors carry no data: they cannot be copied to or from another device");
  }
};

}  // namespace

std::shared_ptr<DeviceRuntime> make_cpu_runtime() { return std::make_shared<CpuRuntime>(); }
std::shared_ptr<DeviceRuntime> make_meta_runtime() { return std::make_shared<MetaRuntime>(); }

}  // namespace tileops
