#include "runtime/host_block_cache.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <new>

namespace tileops {
namespace {

constexpr std::size_t kSmallestClass = 64;

}  // namespace

HostBlockCache::~HostBlockCache() {
  for (auto& [size, blocks] : free_) {
    for (void* p : blocks) std::free(p);
  }
  shards_.for_each([](Shard& shard) {
    for (auto& blocks : shard.free) {
      for (void* p : blocks) std::free(p);
    }
  });
}

std::size_t HostBlockCache::rounded(std::size_t nbytes) {
  if (nbytes < kMinCachedBytes) return nbytes;
  constexpr std::size_t kGranule = 1 << 16;  // sizes within 64 KiB share a bucket
  return (nbytes + kGranule - 1) / kGranule * kGranule;
}

int HostBlockCache::small_class(std::size_t nbytes, std::size_t alignment) {
  const std::size_t size = std::max({nbytes, alignment, kSmallestClass});
  if (size > kMaxSmallBytes) return -1;
  return std::countr_zero(std::bit_ceil(size)) - std::countr_zero(kSmallestClass);
}

void* HostBlockCache::allocate(std::size_t nbytes, std::size_t alignment) {
  // Beyond this the rounding below would wrap around to a small size.
  if (nbytes > kMaxBytes) throw std::bad_alloc();
  if (const int c = small_class(nbytes, alignment); c >= 0) {
    Shard& shard = shards_.mine();
    const std::size_t size = kSmallestClass << c;
    {
      std::lock_guard guard(shard.lock);
      std::vector<void*>& blocks = shard.free[static_cast<std::size_t>(c)];
      if (!blocks.empty()) {
        void* p = blocks.back();
        blocks.pop_back();
        shard.bytes -= size;
        return p;
      }
    }
    // Class sizes are powers of two of at least the alignment, so they are multiples of it.
    return fresh(std::max(alignment, kSmallestClass), size);
  }
  const std::size_t size = (rounded(nbytes) + alignment - 1) / alignment * alignment;
  if (size >= kMinCachedBytes) {
    std::lock_guard lock(mutex_);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      cached_ -= size;
      return p;
    }
  }
  return fresh(alignment, size);
}

void* HostBlockCache::fresh(std::size_t alignment, std::size_t size) {
  if (void* p = std::aligned_alloc(alignment, size)) return p;
  // The blocks kept for reuse may be what the system lacks: give them back and try once more.
  release();
  if (void* p = std::aligned_alloc(alignment, size)) return p;
  throw std::bad_alloc();
}

void HostBlockCache::release() noexcept {
  {
    std::lock_guard lock(mutex_);
    for (auto& [size, blocks] : free_) {
      for (void* p : blocks) std::free(p);
      blocks.clear();
    }
    cached_ = 0;
  }
  shards_.for_each([](Shard& shard) {
    std::lock_guard guard(shard.lock);
    for (auto& blocks : shard.free) {
      for (void* p : blocks) std::free(p);
      blocks.clear();
    }
    shard.bytes = 0;
  });
}

void HostBlockCache::deallocate(void* ptr, std::size_t nbytes, std::size_t alignment) noexcept {
  if (ptr == nullptr) return;
  if (const int c = small_class(nbytes, alignment); c >= 0) {
    Shard& shard = shards_.mine();
    const std::size_t size = kSmallestClass << c;
    std::lock_guard guard(shard.lock);
    if (shard.bytes + size <= kShardSmallBytes) {
      try {
        shard.free[static_cast<std::size_t>(c)].push_back(ptr);
        shard.bytes += size;
        return;
      } catch (const std::bad_alloc&) {
        // No room to remember the block: give it back instead.
      }
    }
    std::free(ptr);
    return;
  }
  const std::size_t size = (rounded(nbytes) + alignment - 1) / alignment * alignment;
  if (size >= kMinCachedBytes) {
    std::lock_guard lock(mutex_);
    if (cached_ + size <= capacity_) {
      try {
        free_[size].push_back(ptr);
        cached_ += size;
        return;
      } catch (const std::bad_alloc&) {
        // No room to remember the block: give it back instead.
      }
    }
  }
  std::free(ptr);
}

std::size_t HostBlockCache::cached_bytes() const {
  std::lock_guard lock(mutex_);
  return cached_;
}

std::size_t HostBlockCache::cached_small_bytes() const {
  std::size_t n = 0;
  shards_.for_each([&](const Shard& shard) {
    std::lock_guard guard(shard.lock);
    n += shard.bytes;
  });
  return n;
}

}  // namespace tileops
