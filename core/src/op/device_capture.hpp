// Whether the calling thread is recording a device graph (tileops::DeviceGraph::capture).
// Recording keeps what the calls queue for replay and nothing else, so a call made while
// recording may only take cached paths: the places that would select a target or build a
// kernel refuse it through refuse_in_capture.
#pragma once

#include <string>

#include "op/thread_calls.hpp"

namespace tileops {

inline bool device_capture_active() { return ThreadCalls::current().device_captures > 0; }

// Marks the calling thread as recording for the scope's lifetime.
class DeviceCaptureScope {
 public:
  DeviceCaptureScope() { ++ThreadCalls::current().device_captures; }
  ~DeviceCaptureScope() { --ThreadCalls::current().device_captures; }
  DeviceCaptureScope(const DeviceCaptureScope&) = delete;
  DeviceCaptureScope& operator=(const DeviceCaptureScope&) = delete;
};

// Throws RuntimeError "<who>: <what> inside a device graph capture; ..." (call only while
// device_capture_active()).
[[noreturn]] void refuse_in_capture(const std::string& who, const std::string& what);

}  // namespace tileops
