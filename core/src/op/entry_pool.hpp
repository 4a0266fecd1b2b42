// The built entries of a binding: one pool, bounded, that holds each built entry once per
// (interface, implementation, identity) and finds it two ways:
//  * by the call spec of a call (interface, device, call spec fields): what kernel_for looks up
//    first when the call cache did not serve it. A built entry remembers the last
//    kCallsPerEntry call specs that led to it.
//  * by (interface, implementation, identity): what kernel_for looks up after dispatch and
//    entry_for, so that calls with equal identities share one built entry.
// Eviction (op/clock_cache.hpp; a lookup by either key counts as a use) drops a built entry with
// the call specs that led to it. A call, or a cached call, that was handed an entry holds it,
// so an evicted entry lives until they are done with it.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "op/clock_cache.hpp"
#include "tileops/extend/identity.hpp"
#include "tileops/extend/kernel.hpp"
#include "tileops/op.hpp"

namespace tileops {

// A call spec as a key: (interface, device, call spec fields). The stored form owns a copy of
// the call spec; lookups probe with a borrowed one.
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
  bool operator()(const CallKey& a, const CallKey& b) const;
  bool operator()(const CallKeyProbe& a, const CallKey& b) const;
  bool operator()(const CallKey& a, const CallKeyProbe& b) const { return (*this)(b, a); }
};

// The hash a CallKey and its probe carry.
std::size_t call_key_hash(int interface, const std::optional<Device>& device, const CallSpec& call,
                          const CallSpecOps& ops);

// What a built entry is built for: its interface, its implementation (installed index) and
// the identity entry_for gave.
struct EntryKey {
  int interface;
  int kernel_index;
  Identity identity;
  friend bool operator==(const EntryKey&, const EntryKey&) = default;
};

struct EntryKeyHash {
  std::size_t operator()(const EntryKey& k) const;
};

// One built entry: the kernel, its interface subobject, and what it was built for.
struct BuiltSlot {
  EntryKey key;
  std::shared_ptr<Kernel> kernel;
  void* interface;
};
using BuiltSlotPtr = std::shared_ptr<const BuiltSlot>;

class EntryPool {
 public:
  static constexpr std::size_t kCallsPerEntry = 8;

  explicit EntryPool(std::size_t capacity) : built_(capacity) {}

  // The built entry `call` led to, and the stored copy of its call spec; null when none did.
  std::pair<BuiltSlotPtr, std::shared_ptr<const CallSpec>> find(const CallKeyProbe& call) const;
  // The entry built for `key`, or null; counts a hit or a miss. On a hit `call` is remembered
  // as leading to it.
  BuiltSlotPtr reuse(const EntryKey& key, const CallKey& call);
  // Keeps `built` (or the entry another call kept first for its key, which it returns) and
  // remembers `call` as leading to it, evicting an entry when the pool is full.
  BuiltSlotPtr insert(BuiltSlotPtr built, const CallKey& call);

  // The built entries held, by interface, each interface's in the order they were built
  // (an entry built in an evicted one's place takes its turn).
  std::vector<BuiltSlotPtr> entries() const;
  // Drops every entry and zeroes the counters.
  void clear();
  void set_capacity(std::size_t capacity);
  CacheCounters counters() const;

 private:
  // A built entry and the call specs that led to it, oldest first.
  struct Held {
    BuiltSlotPtr slot;
    mutable boost::container::small_vector<CallKey, 2> calls;  // written under the exclusive lock
  };
  using Built = ClockCache<EntryKey, Held, EntryKeyHash, std::equal_to<>>;

  // Under the exclusive lock.
  void remember(const Built::Slot& slot, const CallKey& call);
  void forget(const Held& held);

  mutable std::shared_mutex mutex_;
  Built built_;
  std::unordered_map<CallKey, const Built::Slot*, CallKeyHash, CallKeyEqual> by_call_;
};

}  // namespace tileops
