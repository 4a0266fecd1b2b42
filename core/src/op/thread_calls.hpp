// The calling thread's part in op calls: its call stack, the graph it captures, whether it
// records a device graph, and the node its last record publication freed. They live in one
// thread-local object that a call looks up once where it enters and hands down from there:
// each lookup of a shared library's thread-local is a call into the dynamic loader
// (__tls_get_addr), and the call path used to make eight of them.
#pragma once

#include "op/record_slot.hpp"
#include "tileops/signature.hpp"

namespace tileops {

struct CallFrame;
class GraphCapture;

class ThreadCalls {
 public:
  // The calling thread's object (one thread-local lookup).
  static ThreadCalls& current();

  CallFrame* top = nullptr;               // the innermost call in progress, or nullptr
  GraphCapture* graph_capture = nullptr;  // the graph capture running, or nullptr
  int device_captures = 0;                // DeviceCaptureScopes open

  // Where RecordSlot::publish keeps the node a publication replaced for the thread's next
  // one; a node left here is freed when the thread exits.
  RecordNode<SignatureCall>*& spare_record() {
    if (!spare_reclaimed_at_exit_) reclaim_spare_at_exit();
    return spare_record_;
  }

 private:
  void reclaim_spare_at_exit();

  RecordNode<SignatureCall>* spare_record_ = nullptr;
  bool spare_reclaimed_at_exit_ = false;
};

}  // namespace tileops
