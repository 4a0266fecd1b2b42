// Per-thread stripes: one value per stripe, each on cache lines of its own, and a stripe
// chosen per thread, so that threads touching one structure mostly write lines of their own.
// Every per-thread structure of the core (the call cache's counters and record pools, the
// last-call slots, the host allocator's small-block shards) is a Striped.
#pragma once

#include <pthread.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace tileops {

template <class T, unsigned bits = 4>
class Striped {
 public:
  static_assert(bits > 0 && bits < 16);
  static constexpr std::size_t kStripes = std::size_t{1} << bits;

  // The calling thread's stripe. Thread ids are addresses of thread control blocks; the
  // multiplication spreads their bits into the top `bits`, which pick the stripe.
  static std::size_t index() {
    const auto id = static_cast<std::uint64_t>(pthread_self());
    return static_cast<std::size_t>((id * 0x9e3779b97f4a7c15ull) >> (64 - bits));
  }

  T& mine() { return items_[index()].value; }
  T& operator[](std::size_t i) { return items_[i].value; }
  const T& operator[](std::size_t i) const { return items_[i].value; }

  template <class F>
  void for_each(F&& f) {
    for (Item& item : items_) f(item.value);
  }
  template <class F>
  void for_each(F&& f) const {
    for (const Item& item : items_) f(item.value);
  }

 private:
  struct alignas(128) Item {
    T value;
  };
  std::array<Item, kStripes> items_;
};

}  // namespace tileops
