// Captures what the tileops log writes for the scope, through the public set_log_sink.
#pragma once

#include <mutex>
#include <string>
#include <string_view>

#include "tileops/logging.hpp"

namespace tileops::test {

class LogCapture {
 public:
  LogCapture()
      : previous_(set_log_sink([this](LogLevel, std::string_view message) {
          std::lock_guard<std::mutex> lock(mutex_);
          text_.append(message).push_back('\n');
        })) {}
  ~LogCapture() { set_log_sink(std::move(previous_)); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // The messages captured so far, one per line.
  std::string text() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return text_;
  }
  // How many times `what` occurs in the captured text.
  int count(std::string_view what) const {
    const std::string s = text();
    int n = 0;
    for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
    return n;
  }

 private:
  mutable std::mutex mutex_;
  std::string text_;
  LogSink previous_;
};

}  // namespace tileops::test
