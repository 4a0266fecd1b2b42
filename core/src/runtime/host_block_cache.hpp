// A cache of large host blocks. A fresh multi-megabyte allocation costs one page fault per
// page on first touch (tens of milliseconds per call on a virtual machine); keeping freed
// blocks for reuse makes the steady state of repeated calls fault-free, as device caching
// allocators do. Small blocks go straight to the C allocator.
#pragma once

#include <cstddef>
#include <limits>
#include <map>
#include <mutex>
#include <vector>

#include "tileops/export.hpp"

namespace tileops {

class TILEOPS_API HostBlockCache {
 public:
  // Blocks of at least this many bytes are cached.
  static constexpr std::size_t kMinCachedBytes = 1 << 20;

  // `capacity`: the most bytes kept in freed blocks; beyond it, blocks are returned to the OS.
  explicit HostBlockCache(std::size_t capacity) : capacity_(capacity) {}
  ~HostBlockCache();
  HostBlockCache(const HostBlockCache&) = delete;
  HostBlockCache& operator=(const HostBlockCache&) = delete;

  // The most bytes one block may have (what a signed 64-bit offset addresses).
  static constexpr std::size_t kMaxBytes = std::numeric_limits<std::ptrdiff_t>::max();

  // `nbytes` (> 0) aligned to `alignment` (a power of two dividing 64 KiB); throws
  // std::bad_alloc when nbytes exceeds kMaxBytes or the system has no memory.
  void* allocate(std::size_t nbytes, std::size_t alignment);
  void deallocate(void* ptr, std::size_t nbytes) noexcept;

  std::size_t cached_bytes() const;

 private:
  static std::size_t rounded(std::size_t nbytes);

  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::map<std::size_t, std::vector<void*>> free_;  // by rounded size
  std::size_t cached_ = 0;
};

}  // namespace tileops
