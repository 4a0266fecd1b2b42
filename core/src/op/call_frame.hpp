// The thread-local call stack: one frame per op call in progress on this thread. A finished
// call reports its record to the frame below it (the parent call), which files it under the
// stage its sub-op is held at.
#pragma once

#include <boost/container/small_vector.hpp>

#include "tileops/signature.hpp"

namespace tileops {

class Op;
struct Binding;

struct CallFrame {
  explicit CallFrame(Op* op);
  ~CallFrame();
  CallFrame(const CallFrame&) = delete;
  CallFrame& operator=(const CallFrame&) = delete;

  // The innermost call in progress on this thread, or nullptr.
  static CallFrame* top();
  // Removes this frame from the stack now (the destructor does it otherwise).
  void pop();

  // Files a completed sub-op call (`child`'s record) into this frame.
  void report(const Op* child, SignatureCallPtr record);

  Op* op;
  CallFrame* parent;
  Binding* binding = nullptr;  // the binding this call runs under (set in step 4)
  // The installed index of the kernel kernel_for last handed out in this call, or -1: what a
  // fault escaping the op's forward is attributed to.
  int kernel = -1;
  boost::container::small_vector<std::pair<const Op*, SignatureCallPtr>, 4> children;
  const Op* unheld_child = nullptr;  // a sub-op not held through delegate_for completed a call

 private:
  bool popped_ = false;
};

}  // namespace tileops
