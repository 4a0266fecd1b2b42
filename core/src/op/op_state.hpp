// The concurrency state of an op instance, kept out of the public Op class.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "op/binding.hpp"
#include "op/record_slot.hpp"
#include "thread_stripe.hpp"
#include "tileops/op.hpp"

namespace tileops {

struct Op::State {
  // Binding group: the current binding, and every binding this instance ever used (a reset
  // of a committed binding must not free what a concurrent cached call still reads).
  std::atomic<Binding*> binding{nullptr};
  std::vector<std::unique_ptr<Binding>> bindings;
  CacheCapacity capacity;  // under select_mutex
  mutable std::mutex select_mutex;
  std::atomic<std::thread::id> selecting_thread{};

  // Running group.
  std::atomic<bool> tune_requested{false};
  std::atomic<bool> tune_warned{false};
  // last_call: one slot per thread stripe, and the stripe of the latest publication, so that
  // threads sharing an instance publish into slots of their own (and release only records
  // they made) instead of handing each other's records and one slot's line back and forth.
  struct alignas(128) LastCallSlot {
    RecordSlot<SignatureCall> slot;
  };
  static constexpr unsigned kLastCallStripeBits = 4;
  std::array<LastCallSlot, std::size_t{1} << kLastCallStripeBits> last_calls;
  std::atomic<int> last_stripe{-1};

  void publish_last_call(SignatureCallPtr record) {
    const auto stripe = static_cast<int>(thread_stripe<kLastCallStripeBits>());
    last_calls[static_cast<std::size_t>(stripe)].slot.publish(std::move(record));
    if (last_stripe.load(std::memory_order_relaxed) != stripe) last_stripe.store(stripe, std::memory_order_release);
  }
  SignatureCallPtr last_call() const {
    const int stripe = last_stripe.load(std::memory_order_acquire);
    return stripe < 0 ? nullptr : last_calls[static_cast<std::size_t>(stripe)].slot.load();
  }
  struct HeldDelegate {
    std::string stage;
    Identity identity;
    std::shared_ptr<Op> op;
    bool injected = false;
  };
  mutable std::shared_mutex delegates_mutex;
  std::vector<HeldDelegate> delegates;
};

}  // namespace tileops
