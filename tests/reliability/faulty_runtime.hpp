// A host-backed device runtime whose allocations fail on demand, for fault injection: after
// `fail_after(n)` the n+1-th and every later allocation throws until `heal()`. It counts the
// blocks it has handed out and not yet taken back, so tests can see that failures leak nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "tileops/errors.hpp"
#include "tileops/extend/device_runtime.hpp"

namespace tileops::test {

class FaultyRuntime final : public DeviceRuntime {
 public:
  // How an injected failure shows: the runtime's own OutOfMemoryError, or a bare std::bad_alloc
  // that the core must turn into one.
  enum class Failure { out_of_memory, bad_alloc };

  explicit FaultyRuntime(std::string type) : type_(DeviceType::intern(type)) {}

  void fail_after(std::int64_t allocations, Failure how = Failure::out_of_memory) {
    how_ = how;
    remaining_ = allocations;
  }
  void heal() { remaining_ = -1; }

  std::atomic<std::int64_t> injected{0};     // allocations made to fail
  std::atomic<std::int64_t> live_blocks{0};  // handed out, not yet deallocated

  DeviceType type() const override { return type_; }
  int device_count() const override { return 1; }
  DeviceFacts facts(int) const override {
    DeviceFacts f;
    f.sm_count = 1;
    f.name = std::string(type_.name()) + " fault-injection device";
    return f;
  }
  void* allocate(std::size_t nbytes, int) override {
    if (nbytes == 0) return nullptr;
    if (fails_now()) {
      ++injected;
      if (how_ == Failure::bad_alloc) throw std::bad_alloc();
      throw OutOfMemoryError(std::string(type_.name()) + ":0 cannot allocate " + std::to_string(nbytes) +
                             " bytes (injected failure)");
    }
    void* p = std::malloc(nbytes);
    if (p == nullptr) throw std::bad_alloc();
    ++live_blocks;
    return p;
  }
  void deallocate(void* p, std::size_t, int) noexcept override {
    if (p == nullptr) return;
    --live_blocks;
    std::free(p);
  }
  void copy_to_host(void* d, const void* s, std::size_t n, int) override { std::memmove(d, s, n); }
  void copy_from_host(void* d, const void* s, std::size_t n, int) override { std::memmove(d, s, n); }
  void copy_on_device(void* d, const void* s, std::size_t n, int) override { std::memmove(d, s, n); }
  bool host_accessible() const override { return true; }

 private:
  // Counts an allocation down; true once none is left (and for every one after, until heal()).
  bool fails_now() {
    std::int64_t left = remaining_.load();
    for (;;) {
      if (left < 0) return false;
      if (left == 0) return true;
      if (remaining_.compare_exchange_weak(left, left - 1)) return false;
    }
  }

  DeviceType type_;
  std::atomic<std::int64_t> remaining_{-1};  // allocations left before failing; -1: never fail
  std::atomic<Failure> how_{Failure::out_of_memory};
};

}  // namespace tileops::test
