// The config file in the forms users write INI files in, and set_config once backends are loaded.
#include <doctest/doctest.h>

#include "support/scoped_config.hpp"
#include "support/temp_dir.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"

using namespace tileops;
namespace fs = std::filesystem;

TEST_CASE("INI: keys under a [tileops] section are read like keys before any section") {
  test::TempDir dir;
  const Config c = parse_config_file(dir.write("t.conf", "; a comment\n[tileops]\ndefault_target = acme\nlog_level = info\n"));
  CHECK(c.default_target == "acme");
  CHECK(c.log_level == "info");
  CHECK_THROWS_WITH_AS(parse_config_file(dir.write("other.conf", "[colours]\nlog_level = info\n")),
                       doctest::Contains("other.conf:2: key 'log_level': in section [colours], which is not read"),
                       ConfigError);
}

TEST_CASE("INI: a repeated key names its second line and its first, also across the top and [tileops]") {
  test::TempDir dir;
  CHECK_THROWS_WITH_AS(parse_config_file(dir.write("a.conf", "log_level = info\n\nlog_level = debug\n")),
                       doctest::Contains("a.conf:3: key 'log_level': given more than once (first on line 1)"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_config_file(dir.write("b.conf", "log_level = info\n[tileops]\nlog_level = debug\n")),
                       doctest::Contains("b.conf:3: key 'log_level': given more than once (first on line 1)"), ConfigError);
}

TEST_CASE("INI: surrounding quotes are stripped from values") {
  test::TempDir dir;
  const Config c = parse_config_file(dir.write("t.conf", "default_target = \"acme\"\nplugin_path = '/opt/my plugins'\n"));
  CHECK(c.default_target == "acme");
  CHECK(c.plugin_path == std::vector<fs::path>{"/opt/my plugins"});
}

TEST_CASE("log levels are case-insensitive and accept warning, the canonical name is kept") {
  test::TempDir dir;
  CHECK(parse_config_file(dir.write("a.conf", "log_level = WARNING\n")).log_level == "warn");
  CHECK(parse_config_file(dir.write("b.conf", "log_level = Debug\n")).log_level == "debug");
  CHECK(canonical_log_level("Critical") == "critical");
  CHECK_FALSE(canonical_log_level("loud").has_value());
  test::ScopedEnv level("TILEOPS_LOG_LEVEL", "ERROR");
  CHECK(load_config(dir.path() / "a.conf").log_level == "error");
}

TEST_CASE("config_search_path lists every candidate file, TILEOPS_CONFIG alone when set") {
  test::TempDir dir;
  test::ScopedEnv xdg("XDG_CONFIG_HOME", (dir.path() / "home").string());
  test::ScopedEnv dirs("XDG_CONFIG_DIRS", "/etc/one:/etc/two");
  {
    test::ScopedEnv cfg("TILEOPS_CONFIG", nullptr);
    CHECK(config_search_path() == std::vector<fs::path>{dir.path() / "home/tileops/tileops.conf",
                                                        "/etc/one/tileops/tileops.conf", "/etc/two/tileops/tileops.conf",
                                                        "/etc/tileops/tileops.conf"});
  }
  test::ScopedEnv cfg("TILEOPS_CONFIG", "/somewhere/t.conf");
  CHECK(config_search_path() == std::vector<fs::path>{"/somewhere/t.conf"});
}

TEST_CASE("set_config after the backends loaded applies fully or fails naming the keys, never half") {
  load_backends();
  const test::ScopedConfig restore(config());
  Config c = config();
  c.log_level = "error";
  c.default_target = "builtin";
  c.plugin_path.push_back("/elsewhere");
  CHECK_THROWS_WITH_AS(set_config(c), doctest::Contains("set_config: plugin_path cannot change once the backends"),
                       ConfigError);
  CHECK(config().log_level != "error");
  CHECK_FALSE(config().default_target.has_value());
  c.plugin_path.pop_back();
  set_config(c);
  CHECK(config().log_level == "error");
  CHECK(default_target() == "builtin");
}

TEST_CASE("INI: a UTF-8 byte-order mark before the first line is not part of it") {
  test::TempDir dir;
  const Config c = parse_config_file(dir.write("bom.conf", "\xEF\xBB\xBF[tileops]\nlog_level = error\n"));
  CHECK(c.log_level == "error");
}

TEST_CASE("INI: a malformed line is quoted as a short printable excerpt, however long or binary") {
  test::TempDir dir;
  const std::string huge(2'000'000, 'x');
  try {
    parse_config_file(dir.write("long.conf", huge + "\n"));
    FAIL("a malformed line was accepted");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.find("long.conf:1: malformed line '" + std::string(80, 'x') + "...': expected 'key = value'") !=
          std::string::npos);
    CHECK(what.size() < 400);
  }
  CHECK_THROWS_WITH_AS(parse_config_file(dir.write("binary.conf", std::string("ab\x01\x02", 4) + std::string(1, '\0') + "cd\n")),
                       doctest::Contains("malformed line 'ab???cd'"), ConfigError);
}
