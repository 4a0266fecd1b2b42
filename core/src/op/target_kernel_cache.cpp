#include "op/target_kernel_cache.hpp"

#include "join.hpp"
#include "tileops/extend/cache_key.hpp"

namespace tileops {

std::size_t TargetKeyHash::operator()(const TargetKey& k) const {
  std::size_t h = k.device ? std::hash<Device>{}(*k.device) : 0x5bd1e995;
  for (const TargetInputSlot& slot : k.inputs) {
    h = hash_combine(h, slot.present ? cache_key_hash(slot.dtype) : 0x9e37);
    if (slot.present) h = hash_combine(h, cache_key_hash(slot.shape));
  }
  return h;
}

std::string TargetKey::str() const {
  const std::string slots = join_with(inputs, [](std::string& s, const TargetInputSlot& slot) {
    s += slot.present ? std::string(dtype_name(slot.dtype)) + shape_str(slot.shape) : "absent";
  });
  return (device ? device->str() : "unknown device") + " (" + slots + ")";
}

std::shared_ptr<const TargetKernel> TargetKernelCache::find(const TargetKey& key) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(key);
  if (it == index_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  order_.splice(order_.begin(), order_, it->second);
  return it->second->second;
}

std::shared_ptr<const TargetKernel> TargetKernelCache::insert(TargetKey key, std::shared_ptr<const TargetKernel> kernel) {
  std::lock_guard lock(mutex_);
  if (auto it = index_.find(key); it != index_.end()) return it->second->second;
  evict_beyond(capacity_ - 1);
  order_.emplace_front(key, std::move(kernel));
  try {
    index_.emplace(std::move(key), order_.begin());
  } catch (...) {
    order_.pop_front();
    throw;
  }
  return order_.front().second;
}

void TargetKernelCache::evict_beyond(std::size_t capacity) {
  while (order_.size() > capacity) {
    index_.erase(order_.back().first);
    order_.pop_back();
    ++evictions_;
  }
}

std::vector<std::string> TargetKernelCache::keys() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [key, kernel] : order_) out.push_back(key.str());
  return out;
}

void TargetKernelCache::clear() {
  std::lock_guard lock(mutex_);
  index_.clear();
  order_.clear();
  hits_ = misses_ = evictions_ = 0;
}

void TargetKernelCache::set_capacity(std::size_t capacity) {
  std::lock_guard lock(mutex_);
  capacity_ = capacity;
  evict_beyond(capacity);
}

CacheCounters TargetKernelCache::counters() const {
  std::lock_guard lock(mutex_);
  return {hits_, misses_, evictions_, order_.size(), capacity_};
}

}  // namespace tileops
