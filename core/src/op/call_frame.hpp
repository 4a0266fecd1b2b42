// The call stack of a thread (ThreadCalls::top): one frame per op call in progress on it. A finished
// call reports its record to the frame below it (the parent call), which files it under the
// stage its sub-op is held at.
#pragma once

#include <optional>
#include <string>

#include <boost/container/small_vector.hpp>

#include "op/entry_pool.hpp"
#include "op/thread_calls.hpp"
#include "tileops/signature.hpp"

namespace tileops {

class Op;
struct Binding;
struct CachedCall;

struct CallFrame {
  // Pushes a frame for a call of `op` onto `thread`'s stack (the calling thread's).
  CallFrame(Op* op, ThreadCalls& thread);
  ~CallFrame();
  CallFrame(const CallFrame&) = delete;
  CallFrame& operator=(const CallFrame&) = delete;

  // The innermost call in progress on the calling thread, or nullptr.
  static CallFrame* top() { return ThreadCalls::current().top; }
  // Removes this frame from the stack now (the destructor does it otherwise).
  void pop();

  // Files a completed call of a sub-op held under `stage` into this frame.
  void report(const std::string& stage, SignatureCallPtr record);

  Op* op;
  ThreadCalls& thread;
  CallFrame* parent;
  Binding* binding = nullptr;  // the binding this call runs under (set in step 4)
  const ParamMap* params = nullptr;  // the op's parameters on the call device (Op::call_params)
  // The installed index of the kernel kernel_for last handed out in this call, or -1: what a
  // fault escaping the op's forward is attributed to.
  int kernel = -1;
  // The installed indices of every kernel kernel_for handed out in this call, each once, in order.
  boost::container::small_vector<int, 2> served;
  // The target whose kernel ran this call (process-lifetime storage), or empty.
  std::string_view target_served;
  // The cached call this call repeats: kernel_for hands out its steps while forward asks for
  // the same kernels in the same order (`step` is the next one), and the target's kernel.
  const CachedCall* cached = nullptr;
  std::size_t step = 0;
  // The entry this call fills for the call cache, when it missed it and may be kept.
  CachedCall* recording = nullptr;
  // The built entries kernel_for handed out from the binding's pool while not recording: held
  // until the call is done, as the pool may evict them meanwhile.
  boost::container::small_vector<BuiltSlotPtr, 2> held;

  // Notes that kernel_for handed out installed kernel `index` in this call.
  void note_kernel(int index);
  // Completed sub-op calls by stage. The stage names point into the parent's op class, which
  // outlives every instance; nothing here points at a sub-op, which may be gone by step 7.
  boost::container::small_vector<std::pair<const std::string*, SignatureCallPtr>, 4> children;
  // The instance key of the first sub-op not held through delegate_for that completed a call
  // during this one; copied when that call completes, as the sub-op may be a local of forward.
  std::optional<std::string> unheld_child;

 private:
  bool popped_ = false;
};

}  // namespace tileops
