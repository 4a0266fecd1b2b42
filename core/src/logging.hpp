// The core's spdlog logger behind tileops/logging.hpp; not installed (the tests include it too).
#pragma once

#include <spdlog/spdlog.h>

#include "tileops/export.hpp"
#include "tileops/logging.hpp"

namespace tileops {

// The "tileops" logger; created on first use at the configured level.
TILEOPS_API spdlog::logger& log();

}  // namespace tileops
