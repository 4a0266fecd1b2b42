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

std::shared_ptr<const TargetKernel> TargetKernelCache::find(const TargetKey& key) const {
  std::shared_lock lock(mutex_);
  const auto* slot = kernels_.find(key);
  return slot != nullptr ? slot->value() : nullptr;
}

std::shared_ptr<const TargetKernel> TargetKernelCache::insert(TargetKey key, std::shared_ptr<const TargetKernel> kernel) {
  std::unique_lock lock(mutex_);
  return kernels_.insert(std::move(key), std::move(kernel), drop).value();
}

std::vector<std::string> TargetKernelCache::keys() const {
  std::shared_lock lock(mutex_);
  std::vector<std::string> out;
  kernels_.for_each([&](const TargetKey& key, const Kernel&) { out.push_back(key.str()); });
  return out;
}

void TargetKernelCache::clear() {
  std::unique_lock lock(mutex_);
  kernels_.clear(drop);
}

void TargetKernelCache::set_capacity(std::size_t capacity) {
  std::unique_lock lock(mutex_);
  kernels_.set_capacity(capacity, drop);
}

CacheCounters TargetKernelCache::counters() const {
  std::shared_lock lock(mutex_);
  return kernels_.counters();
}

}  // namespace tileops
