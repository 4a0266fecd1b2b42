// The binding of an op instance: which target the instance selected, and everything built
// under it (the call cache, the built entries, the target kernels). A failed selecting call
// replaces it with a fresh Binding.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "op/call_cache.hpp"
#include "op/entry_pool.hpp"
#include "op/target_kernel_cache.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/op.hpp"

namespace tileops {

struct Binding {
  // Set once the selecting call completed; from then on readers use the binding without the
  // selection lock. Written under the instance's selection lock.
  std::atomic<bool> committed{false};
  bool selected = false;                         // step 4 ran and chose something
  std::optional<std::string> serving_target;     // "builtin" or the target's name
  std::string_view target_record_name;           // serving_target in process-lifetime storage, for records
  std::shared_ptr<const TargetBuilder> builder;  // null: in-tree kernels (or a composition)
  std::string builder_owner;                     // the plugin that registered `builder`, for messages

  // Repeats of a call: its check, record and kernels, by the facts of its tensors.
  CallCache calls;
  // The built entries of the in-tree kernels, found by call spec or by (implementation,
  // identity); bounded by the call cache's bound.
  EntryPool entries;
  TargetKernelCache target_kernels;

  explicit Binding(const CacheCapacity& capacity)
      : calls(capacity.calls), entries(capacity.calls), target_kernels(capacity.target_kernels) {}

  // Forgets the selection and everything built under it (a failed selecting call).
  void clear();
  void set_capacity(const CacheCapacity& capacity);
};

}  // namespace tileops
