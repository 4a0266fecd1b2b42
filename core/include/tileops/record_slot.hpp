// RecordSlot: where an op publishes its last call record. Publishing and reading each hold a
// spin flag for the few instructions of a pointer swap or a reference-count increment; nothing
// else on the call path waits on it. (std::atomic<std::shared_ptr> in libstdc++ 12 works the
// same way, but releases its flag with relaxed ordering after a load, which the memory model,
// and ThreadSanitizer, count as a race.)
#pragma once

#include <atomic>
#include <memory>

namespace tileops {

template <class T>
class RecordSlot {
 public:
  std::shared_ptr<const T> load() const {
    lock();
    std::shared_ptr<const T> copy = value_;
    unlock();
    return copy;
  }

  // Stores `next` and returns what it replaced.
  std::shared_ptr<const T> exchange(std::shared_ptr<const T> next) {
    lock();
    value_.swap(next);
    unlock();
    return next;
  }

 private:
  void lock() const {
    while (busy_.exchange(true, std::memory_order_acquire)) {
      while (busy_.load(std::memory_order_relaxed)) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  }
  void unlock() const { busy_.store(false, std::memory_order_release); }

  mutable std::atomic<bool> busy_{false};
  std::shared_ptr<const T> value_;
};

}  // namespace tileops
