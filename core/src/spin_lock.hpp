// A lock for a few instructions' worth of work that is rarely contended (e.g. one free list of
// a thread's shard): taking and releasing it is two atomic operations, a fraction of a mutex's.
#pragma once

#include <atomic>

namespace tileops {

class SpinLock {
 public:
  void lock() noexcept {
    while (held_.exchange(true, std::memory_order_acquire)) {
      while (held_.load(std::memory_order_relaxed)) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

}  // namespace tileops
