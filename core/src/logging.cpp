#include "logging.hpp"

#include <mutex>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

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

constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::trace, spdlog::level::debug,
                                                spdlog::level::info,  spdlog::level::warn,
                                                spdlog::level::err,   spdlog::level::critical};

spdlog::level::level_enum to_spdlog(LogLevel level) { return kLevels[static_cast<int>(level)]; }

}  // namespace

namespace detail {

spdlog::logger& logger() {
  static const std::shared_ptr<spdlog::logger> instance = [] {
    auto l = make_logger();
    try {
      l->set_level(spdlog::level::from_str(config().log_level));
    } catch (const ConfigError&) {
      // A malformed config is reported by whoever needs the config (backend loading, the
      // CLI); the logger stays at its default level so that it can report it.
    }
    return l;
  }();
  return *instance;
}

bool log_enabled(LogLevel level) { return logger().should_log(to_spdlog(level)); }

}  // namespace detail

void log_message(LogLevel level, std::string_view message) { detail::logger().log(to_spdlog(level), "{}", message); }

void set_log_level(const std::string& level) {
  const std::optional<std::string> name = canonical_log_level(level);
  if (!name) {
    throw ConfigError("invalid log level '" + level +
                      "'; expected trace, debug, info, warn (or warning), error, critical or off, in any case");
  }
  detail::logger().set_level(spdlog::level::from_str(*name));
}

}  // namespace tileops
