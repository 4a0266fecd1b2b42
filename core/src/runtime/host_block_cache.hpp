// The host's caching allocator. Freed blocks are kept for reuse, as device caching allocators
// do, in two tiers:
//  * large blocks (at least kMinCachedBytes): a fresh multi-megabyte allocation costs one page
//    fault per page on first touch (tens of milliseconds per call on a virtual machine), so
//    keeping them makes the steady state of repeated calls fault-free. One list per 64 KiB
//    size bucket under one mutex, at most `capacity` bytes in all.
//  * small blocks (up to kMaxSmallBytes): the outputs of calls on small tensors. Aligned
//    allocation in the C library takes its slow path for every one of them; here a block of
//    the size class (a power of two) is taken from, and returned to, a free list of the calling
//    thread's shard, so threads allocating at once mostly take uncontended (spin) locks. Each shard
//    keeps at most kShardSmallBytes.
#pragma once

#include <array>
#include <cstddef>
#include <limits>
#include <map>
#include <mutex>
#include <vector>

#include "spin_lock.hpp"
#include "thread_stripe.hpp"

namespace tileops {

class HostBlockCache {
 public:
  // Blocks of at least this many bytes are cached in the large tier.
  static constexpr std::size_t kMinCachedBytes = 1 << 20;
  // Blocks of at most this many bytes are cached in the small tier.
  static constexpr std::size_t kMaxSmallBytes = 1 << 16;
  // The most bytes one shard keeps in freed small blocks.
  static constexpr std::size_t kShardSmallBytes = 4 << 20;

  // `capacity`: the most bytes kept in freed large blocks; beyond it, blocks are returned to
  // the OS.
  explicit HostBlockCache(std::size_t capacity) : capacity_(capacity) {}
  ~HostBlockCache();
  HostBlockCache(const HostBlockCache&) = delete;
  HostBlockCache& operator=(const HostBlockCache&) = delete;

  // The most bytes one block may have (what a signed 64-bit offset addresses).
  static constexpr std::size_t kMaxBytes = std::numeric_limits<std::ptrdiff_t>::max();

  // `nbytes` (> 0) aligned to `alignment` (a power of two dividing 64 KiB); throws
  // std::bad_alloc when nbytes exceeds kMaxBytes or the system has no memory even after every
  // kept block was given back (release()). `deallocate` takes the same `nbytes` and `alignment`.
  void* allocate(std::size_t nbytes, std::size_t alignment);
  void deallocate(void* ptr, std::size_t nbytes, std::size_t alignment) noexcept;

  // Bytes kept in freed blocks of each tier.
  std::size_t cached_bytes() const;
  std::size_t cached_small_bytes() const;
  // Gives every kept block back to the system.
  void release() noexcept;

 private:
  // A block from the system; on failure, release() and one more try.
  void* fresh(std::size_t alignment, std::size_t size);
  static constexpr unsigned kShardBits = 3;
  static constexpr std::size_t kClasses = 11;  // 64 B to 64 KiB

  struct Shard {
    mutable SpinLock lock;
    std::array<std::vector<void*>, kClasses> free;
    std::size_t bytes = 0;
  };

  static std::size_t rounded(std::size_t nbytes);
  // The small size class of a block, or -1 when it is not small.
  static int small_class(std::size_t nbytes, std::size_t alignment);

  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::map<std::size_t, std::vector<void*>> free_;  // by rounded size
  std::size_t cached_ = 0;
  Striped<Shard, kShardBits> shards_;
};

}  // namespace tileops
