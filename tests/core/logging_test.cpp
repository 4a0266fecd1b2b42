// tileops/logging.hpp: the log as plugins and applications reach it, with no spdlog type.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "support/log_capture.hpp"
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

TEST_CASE("logging: set_log_sink routes each written message, level and text, to the application's sink and returns the one it replaces") {
  test::LogCapture outer;
  std::vector<std::pair<LogLevel, std::string>> seen;
  const LogSink before = set_log_sink([&](LogLevel level, std::string_view message) { seen.emplace_back(level, message); });
  set_log_level("warn");
  CHECK(log_enabled(LogLevel::error));
  CHECK_FALSE(log_enabled(LogLevel::info));
  log_message(LogLevel::error, "routed {} as is");
  log_message(LogLevel::debug, "below the level");
  const LogSink mine = set_log_sink(before);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].first == LogLevel::error);
  CHECK(seen[0].second == "routed {} as is");
  CHECK(static_cast<bool>(mine));
  log_message(LogLevel::error, "after the sink was replaced");
  CHECK(seen.size() == 1);
  CHECK(outer.count("after the sink was replaced") == 1);
  CHECK(outer.count("routed") == 0);
}

TEST_CASE("logging: a sink that logs or throws neither recurses nor stops the code that logged") {
  test::LogCapture outer;
  int calls = 0;
  const LogSink before = set_log_sink([&](LogLevel, std::string_view message) {
    ++calls;
    log_message(LogLevel::error, "logged from inside the sink");
    if (message == "throw") throw std::runtime_error("the sink failed");
  });
  log_message(LogLevel::error, "first");
  CHECK_NOTHROW(log_message(LogLevel::error, "throw"));
  set_log_sink(before);
  CHECK(calls == 2);
  CHECK(outer.count("logged from inside the sink") == 0);
}
