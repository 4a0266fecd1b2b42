// The library's spdlog logger, named "tileops", writing to stderr.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

#include "tileops/export.hpp"

namespace tileops {

// The "tileops" logger; created on first use at the configured level.
TILEOPS_API spdlog::logger& log();

// Sets the logger's level by name (trace, debug, info, warn or warning, error, critical, off; any
// case). Throws ConfigError for any other name.
TILEOPS_API void set_log_level(const std::string& level);

}  // namespace tileops
