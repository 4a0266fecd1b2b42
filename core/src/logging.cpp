#include "logging.hpp"

#include <mutex>

#include <spdlog/sinks/stdout_color_sinks.h>

#include "tileops/config.hpp"
#include "tileops/errors.hpp"

namespace tileops {
namespace {

std::shared_ptr<spdlog::logger> make_logger() {
  auto existing = spdlog::get("tileops");
  if (existing) return existing;
  auto logger = spdlog::stderr_color_mt("tileops");
  logger->set_pattern("[tileops] [%l] %v");
  logger->set_level(spdlog::level::warn);
  return logger;
}

}  // namespace

spdlog::logger& log() {
  static const std::shared_ptr<spdlog::logger> logger = [] {
    auto l = make_logger();
    try {
      l->set_level(spdlog::level::from_str(config().log_level));
    } catch (const ConfigError&) {
      // A malformed config is reported by whoever needs the config (backend loading, the
      // CLI); the logger stays at its default level so that it can report it.
    }
    return l;
  }();
  return *logger;
}

void log_message(LogLevel level, std::string_view message) {
  static constexpr spdlog::level::level_enum levels[] = {spdlog::level::trace, spdlog::level::debug,
                                                         spdlog::level::info,  spdlog::level::warn,
                                                         spdlog::level::err,   spdlog::level::critical};
  log().log(levels[static_cast<int>(level)], "{}", message);
}

void set_log_level(const std::string& level) {
  const std::optional<std::string> name = canonical_log_level(level);
  if (!name) {
    throw ConfigError("invalid log level '" + level +
                      "'; expected trace, debug, info, warn (or warning), error, critical or off, in any case");
  }
  log().set_level(spdlog::level::from_str(*name));
}

}  // namespace tileops
