// Live tileops op instances by instance key, and output plans per call facts: what the
// stable-ABI kernels read on every call. Both are safe to use from any thread.
#pragma once

#include <cstdint>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/c_api.h"

namespace tileops_stable {

// --- Op instances ---------------------------------------------------------------------------

// Registers op `op` under instance key `key` (replacing an entry of that key). Exclusive lock.
void add_op(const std::string& key, tileops_op* op);

// Forgets `key`; returns once no call uses its op any more (exclusive lock), so that the caller
// may free the op afterwards. Unknown keys are ignored.
void remove_op(const std::string& key);

// A call's hold on the registry: while it lives no op can be removed (shared lock).
class OpReader {
 public:
  OpReader();
  // The op registered under `key`, or NULL. Valid while this reader lives. Allocates nothing.
  tileops_op* find(std::string_view key) const;

 private:
  std::shared_lock<std::shared_mutex> lock_;
};

// --- Plans ----------------------------------------------------------------------------------

// One output the kernel allocates: its extents, contiguous strides and torch dtype code.
struct PlannedOutput {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int32_t dtype;
};

// The outputs a call of given facts allocates, in returned order.
struct Plan {
  std::vector<PlannedOutput> outputs;
};

// The plan of facts `key` (see kernel.cpp for the encoding), copied into `*plan`; false when
// none is cached. Shared lock; allocates nothing when `plan` already has room.
bool find_plan(const std::vector<int64_t>& key, Plan* plan);

// Caches `plan` for `key`; the cache is emptied first when it holds kPlanLimit plans.
void store_plan(const std::vector<int64_t>& key, const Plan& plan);

// Empties the plan cache (tests, and ops that are gone).
void clear_plans();

constexpr size_t kPlanLimit = 1024;

}  // namespace tileops_stable
