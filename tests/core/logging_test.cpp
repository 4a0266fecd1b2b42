// tileops/logging.hpp: the log as plugins and applications reach it, with no spdlog type.
#include <doctest/doctest.h>

#include "support/rule_ops.hpp"
#include "tileops/errors.hpp"
#include "tileops/logging.hpp"

using namespace tileops;

TEST_CASE("logging: log_message writes to the tileops logger, filtered by the level set_log_level sets") {
  test::LogCapture logs;
  set_log_level("warn");
  log_message(LogLevel::warn, "a plugin's warning");
  log_message(LogLevel::info, "a plugin's note");
  CHECK(logs.count("a plugin's warning") == 1);
  CHECK(logs.count("a plugin's note") == 0);
  set_log_level("INFO");
  log_message(LogLevel::info, "a plugin's note");
  CHECK(logs.count("a plugin's note") == 1);
  set_log_level("warn");  // the tests' default (an empty config)
  CHECK_THROWS_AS(set_log_level("loud"), ConfigError);
}
