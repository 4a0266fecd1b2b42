// The binding group of an op instance: which target the instance selected, and everything
// built for it. Reset to a fresh Binding when the call that selected the target fails.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "op/call_cache.hpp"
#include "op/target_kernel_cache.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/identity.hpp"
#include "tileops/extend/kernel.hpp"

namespace tileops {

// Binding::entries_by_call's key: (interface, device, call spec fields). The stored form owns a copy
// of the call spec; lookups probe with a borrowed one.
struct CallKeyProbe {
  int interface;
  const std::optional<Device>* device;
  const CallSpec* call;
  const CallSpecOps* ops;
  std::size_t hash;
};

struct CallKey {
  int interface;
  std::optional<Device> device;
  std::shared_ptr<const CallSpec> call;
  const CallSpecOps* ops;
  std::size_t hash;
};

struct CallKeyHash {
  using is_transparent = void;
  std::size_t operator()(const CallKey& k) const { return k.hash; }
  std::size_t operator()(const CallKeyProbe& k) const { return k.hash; }
};

struct CallKeyEqual {
  using is_transparent = void;
  static bool same(int ia, const std::optional<Device>& da, const CallSpec& ca, const CallSpecOps* oa, int ib,
                   const std::optional<Device>& db, const CallSpec& cb, const CallSpecOps* ob) {
    return ia == ib && oa == ob && da == db && oa->equal_fields(ca, cb);
  }
  bool operator()(const CallKey& a, const CallKey& b) const {
    return same(a.interface, a.device, *a.call, a.ops, b.interface, b.device, *b.call, b.ops);
  }
  bool operator()(const CallKeyProbe& a, const CallKey& b) const {
    return same(a.interface, *a.device, *a.call, a.ops, b.interface, b.device, *b.call, b.ops);
  }
  bool operator()(const CallKey& a, const CallKeyProbe& b) const { return (*this)(b, a); }
};

// One built entry: the kernel, its interface subobject, and the implementation that built it.
struct BuiltSlot {
  int kernel_index;  // installed index of the implementation
  Identity identity;
  std::shared_ptr<Kernel> kernel;
  void* interface;
};

struct Binding {
  // Set once the selecting call completed; from then on readers use the binding without the
  // selection lock. Written under Op::select_mutex_.
  std::atomic<bool> committed{false};
  bool selected = false;                         // step 4 ran and chose something
  std::optional<std::string> serving_target;     // "builtin" or the target's name
  std::string_view target_record_name;           // serving_target in process-lifetime storage, for records
  std::shared_ptr<const TargetBuilder> builder;  // null: in-tree kernels (or a composition)
  std::string builder_owner;                     // the plugin that registered `builder`, for messages

  // Repeats of a call: its check, record and kernels, by the facts of its tensors.
  CallCache calls;

  // What a call that missed `calls` looks its kernels up in. `entries_by_call` is bounded like
  // `calls` and dropped whole when full: an entry is rebuilt from `built_entries` (one kernel
  // per implementation and identity, never dropped) without constructing a kernel.
  mutable std::shared_mutex entries_mutex;       // guards the two below
  std::unordered_map<CallKey, BuiltSlot*, CallKeyHash, CallKeyEqual> entries_by_call;
  std::vector<std::vector<std::unique_ptr<BuiltSlot>>> built_entries;  // per interface

  TargetKernelCache target_kernels;

  Binding(std::size_t interfaces, const CacheCapacity& capacity)
      : calls(capacity.calls), built_entries(interfaces), target_kernels(capacity.target_kernels) {}
};

}  // namespace tileops
