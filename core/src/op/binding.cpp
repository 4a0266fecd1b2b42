#include "op/binding.hpp"

namespace tileops {

void Binding::clear() {
  selected = false;
  serving_target.reset();
  target_record_name = {};
  builder.reset();
  builder_owner.clear();
  calls.clear();
  entries.clear();
  target_kernels.clear();
}

void Binding::set_capacity(const CacheCapacity& capacity) {
  calls.set_capacity(capacity.calls);
  entries.set_capacity(capacity.calls);
  target_kernels.set_capacity(capacity.target_kernels);
}

}  // namespace tileops
