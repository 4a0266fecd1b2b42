#include "op/call_frame.hpp"

#include <algorithm>

namespace tileops {

CallFrame::CallFrame(Op* o, ThreadCalls& t) : op(o), thread(t), parent(t.top) { t.top = this; }

CallFrame::~CallFrame() { pop(); }

void CallFrame::pop() {
  if (popped_) return;
  popped_ = true;
  thread.top = parent;
}

void CallFrame::note_kernel(int index) {
  kernel = index;
  if (std::find(served.begin(), served.end(), index) == served.end()) served.push_back(index);
}

void CallFrame::report(const std::string& stage, SignatureCallPtr record) {
  children.emplace_back(&stage, std::move(record));
}

}  // namespace tileops
