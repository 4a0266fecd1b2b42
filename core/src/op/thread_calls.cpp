#include "op/thread_calls.hpp"

#include <type_traits>

namespace tileops {
namespace {
// Trivially destructible, so that a lookup needs no guard of its own (a thread_local with a
// destructor is reached through an initialisation check, itself another lookup).
static_assert(std::is_trivially_destructible_v<ThreadCalls>);
constinit thread_local ThreadCalls t_calls;

struct SpareReclaimer {
  ~SpareReclaimer() {
    delete t_calls.spare_record();
    t_calls.spare_record() = nullptr;
  }
};
thread_local SpareReclaimer t_reclaimer;
}  // namespace

ThreadCalls& ThreadCalls::current() { return t_calls; }

void ThreadCalls::reclaim_spare_at_exit() {
  spare_reclaimed_at_exit_ = true;
  [[maybe_unused]] volatile SpareReclaimer* registered = &t_reclaimer;  // constructs it for this thread
}

}  // namespace tileops
