#include "op/binding.hpp"

#include <atomic>

namespace tileops {

std::uint64_t next_binding_epoch() {
  static std::atomic<std::uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

std::size_t TargetKeyHash::operator()(const TargetKey& k) const {
  std::size_t h = k.device ? std::hash<Device>{}(*k.device) : 0x5bd1e995;
  for (const TargetInputSlot& slot : k.inputs) {
    h = hash_combine(h, slot.present ? cache_key_hash(slot.dtype) : 0x9e37);
    if (slot.present) h = hash_combine(h, cache_key_hash(slot.shape));
  }
  return h;
}

std::string TargetKey::str() const {
  std::string s = device ? device->str() : "unknown device";
  s += " (";
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (i) s += ", ";
    s += inputs[i].present ? std::string(dtype_name(inputs[i].dtype)) + shape_str(inputs[i].shape) : "absent";
  }
  return s + ")";
}

}  // namespace tileops
