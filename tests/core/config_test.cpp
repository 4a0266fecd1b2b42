#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>

#include "support/temp_dir.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"

using namespace tileops;
namespace fs = std::filesystem;

TEST_CASE("a config file sets every key, relative plugin paths are relative to the file") {
  test::TempDir dir;
  const fs::path file = dir.write("tileops.conf",
                                  "# a comment\n"
                                  "default_target = acme\n"
                                  "plugin_path = plugins:/opt/vendor/plugins\n"
                                  "manifest_path = specs\n"
                                  "log_level = debug   # trailing comment\n"
                                  "disable_plugins = cuda, rocm\n");
  const Config c = parse_config_file(file);
  CHECK(c.file == fs::absolute(file));
  CHECK(c.default_target == "acme");
  REQUIRE(c.plugin_path.size() == 2);
  CHECK(c.plugin_path[0] == dir.path() / "plugins");
  CHECK(c.plugin_path[1] == "/opt/vendor/plugins");
  CHECK(c.manifest_path == std::vector<fs::path>{dir.path() / "specs"});
  CHECK(c.log_level == "debug");
  CHECK(c.disable_plugins == std::vector<std::string>{"cuda", "rocm"});
}

TEST_CASE("an unknown key is a ConfigError naming the file, the line and the key") {
  test::TempDir dir;
  const fs::path file = dir.write("bad.conf", "log_level = info\n\ndefualt_target = acme\n");
  CHECK_THROWS_WITH_AS(parse_config_file(file), doctest::Contains("bad.conf:3: key 'defualt_target': unknown key"),
                       ConfigError);
}

TEST_CASE("a line without '=' is a ConfigError naming the line") {
  test::TempDir dir;
  const fs::path file = dir.write("bad.conf", "log_level = info\njust some words\n");
  CHECK_THROWS_WITH_AS(parse_config_file(file), doctest::Contains("bad.conf:2: malformed line 'just some words'"),
                       ConfigError);
}

TEST_CASE("a repeated key is a ConfigError") {
  test::TempDir dir;
  const fs::path file = dir.write("bad.conf", "log_level = info\nlog_level = debug\n");
  CHECK_THROWS_WITH_AS(parse_config_file(file), doctest::Contains("key 'log_level': given more than once"),
                       ConfigError);
}

TEST_CASE("an invalid value is a ConfigError naming the key and the accepted values") {
  test::TempDir dir;
  const fs::path file = dir.write("bad.conf", "\nlog_level = loud\n");
  CHECK_THROWS_WITH_AS(parse_config_file(file), doctest::Contains("bad.conf:2: key 'log_level': invalid log level 'loud'"),
                       ConfigError);
  const fs::path empty_target = dir.write("bad2.conf", "default_target =\n");
  CHECK_THROWS_WITH_AS(parse_config_file(empty_target), doctest::Contains("invalid target name ''"), ConfigError);
}

TEST_CASE("a missing file is a ConfigError") {
  CHECK_THROWS_WITH_AS(parse_config_file("/nonexistent/tileops.conf"), doctest::Contains("cannot be opened"),
                       ConfigError);
}

TEST_CASE("config precedence: TILEOPS_CONFIG over the config directories, environment over the file") {
  test::TempDir dir;
  const fs::path home_conf = dir.write("home/tileops/tileops.conf", "default_target = from_home\nlog_level = info\n");
  const fs::path explicit_conf = dir.write("explicit.conf", "default_target = from_explicit\nlog_level = error\n");
  test::ScopedEnv xdg("XDG_CONFIG_HOME", (dir.path() / "home").string());
  test::ScopedEnv dirs("XDG_CONFIG_DIRS", (dir.path() / "none").string());
  test::ScopedEnv target("TILEOPS_DEFAULT_TARGET", nullptr);
  test::ScopedEnv level("TILEOPS_LOG_LEVEL", nullptr);
  test::ScopedEnv plugins("TILEOPS_PLUGIN_PATH", nullptr);

  {
    test::ScopedEnv cfg("TILEOPS_CONFIG", nullptr);
    CHECK(find_config_file() == home_conf);
    CHECK(load_config().default_target == "from_home");
  }
  {
    test::ScopedEnv cfg("TILEOPS_CONFIG", explicit_conf.string().c_str());
    CHECK(load_config().default_target == "from_explicit");
    test::ScopedEnv env_target("TILEOPS_DEFAULT_TARGET", "from_env");
    test::ScopedEnv env_level("TILEOPS_LOG_LEVEL", "trace");
    test::ScopedEnv env_plugins("TILEOPS_PLUGIN_PATH", "/a:/b");
    const Config c = load_config();
    CHECK(c.default_target == "from_env");
    CHECK(c.log_level == "trace");
    CHECK(c.plugin_path == std::vector<fs::path>{"/a", "/b"});
    CHECK(c.file == fs::absolute(explicit_conf));
  }
  {
    test::ScopedEnv cfg("TILEOPS_CONFIG", (dir.path() / "missing.conf").string().c_str());
    CHECK_THROWS_WITH_AS(load_config(), doctest::Contains("does not exist"), ConfigError);
  }
  {
    test::ScopedEnv cfg("TILEOPS_CONFIG", nullptr);
    test::ScopedEnv env_level("TILEOPS_LOG_LEVEL", "chatty");
    CHECK_THROWS_WITH_AS(load_config(), doctest::Contains("TILEOPS_LOG_LEVEL: invalid log level 'chatty'"),
                         ConfigError);
  }
}

TEST_CASE("no config file anywhere gives the defaults") {
  test::TempDir dir;
  test::ScopedEnv cfg("TILEOPS_CONFIG", nullptr);
  test::ScopedEnv xdg("XDG_CONFIG_HOME", (dir.path() / "a").string());
  test::ScopedEnv dirs("XDG_CONFIG_DIRS", (dir.path() / "b").string());
  test::ScopedEnv target("TILEOPS_DEFAULT_TARGET", nullptr);
  test::ScopedEnv level("TILEOPS_LOG_LEVEL", nullptr);
  if (fs::exists("/etc/tileops/tileops.conf")) return;
  const Config c = load_config();
  CHECK_FALSE(c.file.has_value());
  CHECK_FALSE(c.default_target.has_value());
  CHECK(c.log_level == "warn");
}
