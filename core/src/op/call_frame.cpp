#include "op/call_frame.hpp"

#include <algorithm>

namespace tileops {
namespace {
thread_local CallFrame* g_top = nullptr;
}

CallFrame::CallFrame(Op* o) : op(o), parent(g_top) { g_top = this; }

CallFrame::~CallFrame() { pop(); }

void CallFrame::pop() {
  if (popped_) return;
  popped_ = true;
  g_top = parent;
}

CallFrame* CallFrame::top() { return g_top; }

void CallFrame::note_kernel(int index) {
  kernel = index;
  if (std::find(served.begin(), served.end(), index) == served.end()) served.push_back(index);
}

void CallFrame::report(const std::string& stage, SignatureCallPtr record) {
  children.emplace_back(&stage, std::move(record));
}

}  // namespace tileops
