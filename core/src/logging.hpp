// The core's side of the one log API, tileops/logging.hpp: log() formats a message and hands
// it to log_message, as a plugin does; nothing in the core writes to the logger another way.
// Not installed (the tests include it too).
#pragma once

#include <utility>

#include <spdlog/fmt/fmt.h>

#include "tileops/logging.hpp"

namespace tileops {
// log().warn("plugin {} failed", name): formats with fmt and calls log_message.
class Log {
 public:
  template <class... A>
  void trace(fmt::format_string<A...> format, A&&... args) const { write(LogLevel::trace, format, std::forward<A>(args)...); }
  template <class... A>
  void debug(fmt::format_string<A...> format, A&&... args) const { write(LogLevel::debug, format, std::forward<A>(args)...); }
  template <class... A>
  void info(fmt::format_string<A...> format, A&&... args) const { write(LogLevel::info, format, std::forward<A>(args)...); }
  template <class... A>
  void warn(fmt::format_string<A...> format, A&&... args) const { write(LogLevel::warn, format, std::forward<A>(args)...); }
  template <class... A>
  void error(fmt::format_string<A...> format, A&&... args) const { write(LogLevel::error, format, std::forward<A>(args)...); }
  template <class... A>
  void critical(fmt::format_string<A...> format, A&&... args) const {
    write(LogLevel::critical, format, std::forward<A>(args)...);
  }

 private:
  template <class... A>
  static void write(LogLevel level, fmt::format_string<A...> format, A&&... args) {
    if (log_enabled(level)) log_message(level, fmt::format(format, std::forward<A>(args)...));
  }
};

inline Log log() { return {}; }

}  // namespace tileops
