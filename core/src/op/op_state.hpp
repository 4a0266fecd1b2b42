// The concurrency state of an op instance, kept out of the public Op class.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "op/binding.hpp"
#include "op/record_slot.hpp"
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
  RecordSlot<SignatureCall> last_call;
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
