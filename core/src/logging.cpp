#include "logging.hpp"

#include <mutex>

#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "tileops/config.hpp"
#include "tileops/errors.hpp"

namespace tileops {
namespace {

constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::trace, spdlog::level::debug,
                                                spdlog::level::info,  spdlog::level::warn,
                                                spdlog::level::err,   spdlog::level::critical};

spdlog::level::level_enum to_spdlog(LogLevel level) { return kLevels[static_cast<int>(level)]; }

LogLevel from_spdlog(spdlog::level::level_enum level) {
  for (int i = 0; i < static_cast<int>(std::size(kLevels)); ++i) {
    if (kLevels[i] == level) return static_cast<LogLevel>(i);
  }
  return LogLevel::critical;
}

// Set while the application's sink runs on this thread: a message it logs would lock the sink
// it is already inside, so log_message drops it.
thread_local bool in_application_sink = false;

// The logger's one sink: stderr, or the application's LogSink once set_log_sink gave one. The
// base sink's mutex serialises writing and swapping, so the swap is safe beside logging threads.
class SwitchableSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  SwitchableSink() : stderr_(std::make_shared<spdlog::sinks::stderr_color_sink_mt>()) {
    stderr_->set_pattern("[tileops] [%l] %v");
  }

  LogSink replace(LogSink sink) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::swap(sink_, sink);
    return sink;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (sink_) {
      in_application_sink = true;
      struct Leave {
        ~Leave() { in_application_sink = false; }
      } leave;
      sink_(from_spdlog(msg.level), std::string_view(msg.payload.data(), msg.payload.size()));
    } else {
      stderr_->log(msg);
    }
  }
  void flush_() override { stderr_->flush(); }

 private:
  std::shared_ptr<spdlog::sinks::stderr_color_sink_mt> stderr_;
  LogSink sink_;
};

struct TileopsLogger {
  std::shared_ptr<SwitchableSink> sink = std::make_shared<SwitchableSink>();
  spdlog::logger logger{"tileops", sink};

  TileopsLogger() {
    logger.set_level(spdlog::level::warn);
    try {
      logger.set_level(spdlog::level::from_str(config().log_level));
    } catch (const ConfigError&) {
      // A malformed config is reported by whoever needs the config (backend loading, the
      // CLI); the logger stays at its default level so that it can report it.
    }
  }
};

TileopsLogger& tileops_logger() {
  static TileopsLogger instance;
  return instance;
}

}  // namespace

bool log_enabled(LogLevel level) { return tileops_logger().logger.should_log(to_spdlog(level)); }

void log_message(LogLevel level, std::string_view message) {
  if (in_application_sink) return;
  tileops_logger().logger.log(to_spdlog(level), "{}", message);
}

LogSink set_log_sink(LogSink sink) { return tileops_logger().sink->replace(std::move(sink)); }

void set_log_level(const std::string& level) {
  const std::optional<std::string> name = canonical_log_level(level);
  if (!name) {
    throw ConfigError("invalid log level '" + level +
                      "'; expected trace, debug, info, warn (or warning), error, critical or off, in any case");
  }
  tileops_logger().logger.set_level(spdlog::level::from_str(*name));
}

}  // namespace tileops
