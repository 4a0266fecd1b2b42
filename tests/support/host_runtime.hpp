// A device runtime whose memory is host memory, for test device types ("acme_t", a fake
// accelerator). Counts set_current_device calls so tests can see device switches; the
// architecture it reports can be changed, so that dispatch tests choose the device facts.
#pragma once

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tileops/extend/device_runtime.hpp"

namespace tileops::test {

class HostRuntime final : public DeviceRuntime {
 public:
  HostRuntime(std::string type, int count, bool accelerator, int arch = 0)
      : type_(DeviceType::intern(type)), count_(count), accelerator_(accelerator), arch_(arch) {}

  DeviceType type() const override { return type_; }
  int device_count() const override { return count_; }
  DeviceFacts facts(int) const override {
    DeviceFacts f;
    f.arch = arch_.load();
    f.sm_count = 4;
    f.name = std::string(type_.name()) + " test device";
    return f;
  }
  void* allocate(std::size_t nbytes, int) override { return nbytes ? std::malloc(nbytes) : nullptr; }
  void deallocate(void* p, std::size_t, int) noexcept override { std::free(p); }
  void copy_to_host(void* d, const void* s, std::size_t n, int) override { std::memmove(d, s, n); }
  void copy_from_host(void* d, const void* s, std::size_t n, int) override { std::memmove(d, s, n); }
  void copy_on_device(void* d, const void* s, std::size_t n, int) override { std::memmove(d, s, n); }
  bool host_accessible() const override { return true; }
  bool is_accelerator() const override { return accelerator_; }
  int current_device() const override { return current_.load(); }
  void set_current_device(int index) override {
    DeviceRuntime::set_current_device(index);
    ++switches;
    current_ = index;
  }

  void set_arch(int arch) { arch_ = arch; }

  std::atomic<int> switches{0};

 private:
  DeviceType type_;
  int count_;
  bool accelerator_;
  std::atomic<int> arch_;
  std::atomic<int> current_{0};
};

}  // namespace tileops::test
