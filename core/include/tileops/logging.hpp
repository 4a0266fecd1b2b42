// The library's log, named "tileops", writing to stderr ("[tileops] [warning] ..."). The one
// way to log: plugins call log_message, and so does the core (through log() in
// core/src/logging.hpp, which only formats the message).
#pragma once

#include <string>
#include <string_view>

#include "tileops/export.hpp"

namespace tileops {

enum class LogLevel { trace, debug, info, warn, error, critical };

// Writes `message` to the tileops log at `level`; dropped when the log's level is above it.
TILEOPS_API void log_message(LogLevel level, std::string_view message);

// Sets the log's level by name (trace, debug, info, warn or warning, error, critical, off; any
// case). Throws ConfigError for any other name.
TILEOPS_API void set_log_level(const std::string& level);

}  // namespace tileops
