#include "op/entry_pool.hpp"

#include <algorithm>
#include <mutex>

#include "tileops/extend/cache_key.hpp"

namespace tileops {
namespace {

bool same_call(int ia, const std::optional<Device>& da, const CallSpec& ca, const CallSpecOps* oa, int ib,
               const std::optional<Device>& db, const CallSpec& cb, const CallSpecOps* ob) {
  return ia == ib && oa == ob && da == db && oa->equal_fields(ca, cb);
}

}  // namespace

bool CallKeyEqual::operator()(const CallKey& a, const CallKey& b) const {
  return same_call(a.interface, a.device, *a.call, a.ops, b.interface, b.device, *b.call, b.ops);
}

bool CallKeyEqual::operator()(const CallKeyProbe& a, const CallKey& b) const {
  return same_call(a.interface, *a.device, *a.call, a.ops, b.interface, b.device, *b.call, b.ops);
}

std::size_t call_key_hash(int interface, const std::optional<Device>& device, const CallSpec& call,
                          const CallSpecOps& ops) {
  std::size_t h = hash_combine(static_cast<std::size_t>(interface), device ? std::hash<Device>{}(*device) : 0x5bd1e995);
  return hash_combine(h, ops.hash_fields(call));
}

std::size_t EntryKeyHash::operator()(const EntryKey& k) const {
  const std::size_t h = hash_combine(static_cast<std::size_t>(k.interface), static_cast<std::size_t>(k.kernel_index));
  return hash_combine(h, k.identity.hash());
}

std::pair<BuiltSlotPtr, std::shared_ptr<const CallSpec>> EntryPool::find(const CallKeyProbe& call) const {
  std::shared_lock lock(mutex_);
  auto it = by_call_.find(call);
  if (it == by_call_.end()) return {};
  it->second->touch();
  return {it->second->value().slot, it->first.call};
}

BuiltSlotPtr EntryPool::reuse(const EntryKey& key, const CallKey& call) {
  std::unique_lock lock(mutex_);
  const Built::Slot* slot = built_.find(key);
  if (slot == nullptr) return nullptr;
  remember(*slot, call);
  return slot->value().slot;
}

BuiltSlotPtr EntryPool::insert(BuiltSlotPtr built, const CallKey& call) {
  std::unique_lock lock(mutex_);
  EntryKey key = built->key;
  const Built::Slot& slot = built_.insert(std::move(key), Held{std::move(built), {}}, [&](const Held& h) { forget(h); });
  remember(slot, call);
  return slot.value().slot;
}

void EntryPool::remember(const Built::Slot& slot, const CallKey& call) {
  const Held& held = slot.value();
  auto [it, added] = by_call_.try_emplace(call, &slot);
  if (!added) return;  // another call remembered it first
  try {
    if (held.calls.size() == kCallsPerEntry) {
      by_call_.erase(held.calls.front());
      held.calls.erase(held.calls.begin());
    }
    held.calls.push_back(call);
  } catch (...) {
    by_call_.erase(it);  // a call spec the entry does not list must not find it
    throw;
  }
}

void EntryPool::forget(const Held& held) {
  for (const CallKey& call : held.calls) by_call_.erase(call);
}

std::vector<BuiltSlotPtr> EntryPool::entries() const {
  std::vector<BuiltSlotPtr> out;
  {
    std::shared_lock lock(mutex_);
    built_.for_each([&](const EntryKey&, const Held& held) { out.push_back(held.slot); });
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const BuiltSlotPtr& a, const BuiltSlotPtr& b) { return a->key.interface < b->key.interface; });
  return out;
}

void EntryPool::clear() {
  std::unique_lock lock(mutex_);
  built_.clear([](const Held&) {});
  by_call_.clear();
}

void EntryPool::set_capacity(std::size_t capacity) {
  std::unique_lock lock(mutex_);
  built_.set_capacity(capacity, [&](const Held& h) { forget(h); });
}

CacheCounters EntryPool::counters() const {
  std::shared_lock lock(mutex_);
  return built_.counters();
}

}  // namespace tileops
