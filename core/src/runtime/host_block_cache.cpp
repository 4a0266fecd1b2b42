#include "runtime/host_block_cache.hpp"

#include <cstdlib>
#include <new>

namespace tileops {

HostBlockCache::~HostBlockCache() {
  for (auto& [size, blocks] : free_) {
    for (void* p : blocks) std::free(p);
  }
}

std::size_t HostBlockCache::rounded(std::size_t nbytes) {
  if (nbytes < kMinCachedBytes) return nbytes;
  constexpr std::size_t kGranule = 1 << 16;  // sizes within 64 KiB share a bucket
  return (nbytes + kGranule - 1) / kGranule * kGranule;
}

void* HostBlockCache::allocate(std::size_t nbytes, std::size_t alignment) {
  // Beyond this the rounding below would wrap around to a small size.
  if (nbytes > kMaxBytes) throw std::bad_alloc();
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
  void* p = std::aligned_alloc(alignment, size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void HostBlockCache::deallocate(void* ptr, std::size_t nbytes) noexcept {
  if (ptr == nullptr) return;
  const std::size_t size = rounded(nbytes);
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

}  // namespace tileops
