// The library's log, named "tileops", writing to stderr ("[tileops] [warning] ...") unless the
// application gives it a sink. The one way to log: plugins call log_message, and so does the
// core (through log() in core/src/logging.hpp, which only formats the message).
#pragma once

#include <functional>
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

// Whether a message at `level` would be written (so that a caller need not format a message the
// log drops).
TILEOPS_API bool log_enabled(LogLevel level);

// Receives each message the log writes, at or above the log's level, unformatted. Called on the
// thread that logs, one call at a time. What it logs itself is dropped (the log does not
// recurse into it); what it throws is reported on stderr and the code that logged carries on.
using LogSink = std::function<void(LogLevel level, std::string_view message)>;

// Sends the log's messages to `sink` instead of stderr (an empty sink: back to stderr), e.g. to
// route them into the application's own log. Returns the sink it replaces (empty for stderr), so
// that a scope can restore it. Safe to call while other threads log.
TILEOPS_API LogSink set_log_sink(LogSink sink);

}  // namespace tileops
