// ClockCache: the bounded form of a binding's kernel caches (its built entries and its target
// kernels). At most `capacity` values by key; a new value beyond that replaces the one the
// CLOCK policy picks (second chance), the usual approximation of least-recently-used order that
// needs no shared write on a hit: a hit sets its slot's `referenced` flag only when it is clear,
// and the clock hand evicts the first slot whose flag it finds clear, clearing the flags it
// passes. The call cache evicts by the same policy.
//
// Not synchronized: find() and for_each() may run concurrently with each other (under a shared
// lock of the owner), every other member needs the owner's exclusive lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tileops/op.hpp"

namespace tileops {

template <class Key, class Value, class Hash, class Equal>
class ClockCache {
 public:
  // Where one value is held. A slot stays where it is while it holds its value (an owner may
  // keep a pointer to it until the value is evicted).
  class Slot {
   public:
    const Value& value() const { return value_; }
    // Marks the value used, so that the clock hand passes it over once more.
    void touch() const {
      if (!referenced_.load(std::memory_order_relaxed)) referenced_.store(true, std::memory_order_relaxed);
    }

   private:
    friend class ClockCache;
    const Key* key_ = nullptr;  // the index's copy
    Value value_{};
    mutable std::atomic<bool> referenced_{false};
  };

  explicit ClockCache(std::size_t capacity) : capacity_(capacity) {}
  ClockCache(const ClockCache&) = delete;
  ClockCache& operator=(const ClockCache&) = delete;

  // The slot holding `key` (a Key or a probe that Hash and Equal take), touched, or nullptr;
  // counts a hit or a miss.
  template <class Probe>
  const Slot* find(const Probe& key) const {
    auto it = index_.find(key);
    if (it == index_.end()) {
      misses_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    const Slot& slot = *slots_[it->second];
    slot.touch();
    hits_.fetch_add(1, std::memory_order_relaxed);
    return &slot;
  }

  // Keeps `value` under `key` unless the key holds a value already, and returns the slot that
  // holds the key. When the cache is full the victim's value is passed to `evicted` first.
  template <class Evicted>
  const Slot& insert(Key key, Value value, Evicted&& evicted) {
    if (auto it = index_.find(key); it != index_.end()) return *slots_[it->second];
    std::size_t at = slots_.size();
    if (at < capacity_) {
      slots_.push_back(std::make_unique<Slot>());
    } else {
      at = victim();
      evict(at, evicted);
      hand_ = (at + 1) % slots_.size();
    }
    try {
      Slot& slot = *slots_[at];
      slot.key_ = &index_.emplace(std::move(key), at).first->first;
      slot.value_ = std::move(value);
      slot.referenced_.store(false, std::memory_order_relaxed);
      return slot;
    } catch (...) {
      remove(at);  // no memory to index it: the slot goes
      throw;
    }
  }

  // Calls f(key, value) for every value held, in slot order.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& slot : slots_) f(*slot->key_, slot->value_);
  }

  // Drops every value (passing each to `evicted`) and zeroes the counters.
  template <class Evicted>
  void clear(Evicted&& evicted) {
    for (auto& slot : slots_) evicted(slot->value_);
    slots_.clear();
    index_.clear();
    hand_ = 0;
    hits_.store(0, std::memory_order_relaxed);
    misses_.store(0, std::memory_order_relaxed);
    evictions_ = 0;
  }

  // Sets the bound, evicting (through `evicted`) down to it.
  template <class Evicted>
  void set_capacity(std::size_t capacity, Evicted&& evicted) {
    while (slots_.size() > capacity) {
      const std::size_t at = victim();
      evict(at, evicted);
      remove(at);
      hand_ = 0;
    }
    capacity_ = capacity;
  }

  CacheCounters counters() const {
    return {hits_.load(std::memory_order_relaxed), misses_.load(std::memory_order_relaxed), evictions_, slots_.size(),
            capacity_};
  }

 private:
  std::size_t victim() {
    for (;;) {
      if (hand_ >= slots_.size()) hand_ = 0;
      if (!slots_[hand_]->referenced_.exchange(false, std::memory_order_relaxed)) return hand_;
      ++hand_;
    }
  }

  template <class Evicted>
  void evict(std::size_t at, Evicted& evicted) {
    Slot& slot = *slots_[at];
    evicted(slot.value_);
    index_.erase(index_.find(*slot.key_));
    slot.key_ = nullptr;
    slot.value_ = Value{};
    ++evictions_;
  }

  // Removes the emptied slot `at`; the last slot fills the gap, so that slots stay dense.
  void remove(std::size_t at) {
    if (at + 1 != slots_.size()) {
      std::swap(slots_[at], slots_.back());
      index_.find(*slots_[at]->key_)->second = at;
    }
    slots_.pop_back();
  }

  std::vector<std::unique_ptr<Slot>> slots_;
  std::unordered_map<Key, std::size_t, Hash, Equal> index_;  // key → slot
  std::size_t capacity_;
  std::size_t hand_ = 0;
  mutable std::atomic<std::uint64_t> hits_{0};
  mutable std::atomic<std::uint64_t> misses_{0};
  std::uint64_t evictions_ = 0;
};

}  // namespace tileops
