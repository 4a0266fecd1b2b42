// Environment variables and config values: a malformed value is a
// ConfigError naming the variable or key, the value and what is accepted.
#include <doctest/doctest.h>

#include <string>

#include "support/temp_dir.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"

using namespace tileops;
namespace fs = std::filesystem;

namespace {

Config load_with(const char* name, const std::string& value) {
  test::ScopedEnv cfg("TILEOPS_CONFIG", nullptr);
  test::ScopedEnv var(name, value);
  return load_config(std::nullopt);
}

}  // namespace

TEST_CASE("TILEOPS_DEFAULT_TARGET must be a printable ASCII name without spaces, of at most 256 characters") {
  CHECK(load_with("TILEOPS_DEFAULT_TARGET", "acme").default_target == "acme");
  CHECK_THROWS_WITH_AS(load_with("TILEOPS_DEFAULT_TARGET", "two words"),
                       doctest::Contains("environment variable TILEOPS_DEFAULT_TARGET: invalid target name 'two words'"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_with("TILEOPS_DEFAULT_TARGET", "bell\a"), doctest::Contains("printable ASCII characters"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_with("TILEOPS_DEFAULT_TARGET", std::string(300, 't')),
                       doctest::Contains("at most 256 printable ASCII characters"), ConfigError);
}

TEST_CASE("TILEOPS_DISABLE_PLUGINS takes plugin names, not paths") {
  CHECK(load_with("TILEOPS_DISABLE_PLUGINS", "cuda, rocm").disable_plugins == std::vector<std::string>{"cuda", "rocm"});
  CHECK_THROWS_WITH_AS(load_with("TILEOPS_DISABLE_PLUGINS", "cuda,/usr/lib/libtileops_cuda.so"),
                       doctest::Contains("TILEOPS_DISABLE_PLUGINS: invalid plugin name '/usr/lib/libtileops_cuda.so'"),
                       ConfigError);
}

TEST_CASE("TILEOPS_PLUGIN_PATH and TILEOPS_MANIFEST_PATH reject control characters and over-long entries") {
  CHECK(load_with("TILEOPS_PLUGIN_PATH", "/opt/a:/opt/b").plugin_path == std::vector<fs::path>{"/opt/a", "/opt/b"});
  CHECK_THROWS_WITH_AS(load_with("TILEOPS_PLUGIN_PATH", "/opt/a\n/opt/b"),
                       doctest::Contains("TILEOPS_PLUGIN_PATH: the value contains the control character 10"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_with("TILEOPS_MANIFEST_PATH", "/" + std::string(5000, 'm')),
                       doctest::Contains("TILEOPS_MANIFEST_PATH: the entry"), ConfigError);
  CHECK_THROWS_WITH_AS(load_with("TILEOPS_MANIFEST_PATH", "/" + std::string(5000, 'm')),
                       doctest::Contains("longer than 4096 characters"), ConfigError);
}

TEST_CASE("TILEOPS_LOG_LEVEL names the accepted levels") {
  CHECK_THROWS_WITH_AS(load_with("TILEOPS_LOG_LEVEL", "loud"),
                       doctest::Contains("TILEOPS_LOG_LEVEL: invalid log level 'loud'; expected trace, debug"),
                       ConfigError);
}

TEST_CASE("config keys get the same checks as their variables, naming the file, line and key") {
  test::TempDir dir;
  const fs::path file = dir.write("bad.conf", "log_level = info\ndisable_plugins = ../evil\n");
  CHECK_THROWS_WITH_AS(parse_config_file(file),
                       doctest::Contains("bad.conf:2: key 'disable_plugins': invalid plugin name '../evil'"),
                       ConfigError);
  const fs::path long_path = dir.write("long.conf", "plugin_path = /" + std::string(5000, 'p') + "\n");
  CHECK_THROWS_WITH_AS(parse_config_file(long_path), doctest::Contains("long.conf:1: key 'plugin_path'"), ConfigError);
  Config c;
  c.disable_plugins = {"has space"};
  CHECK_THROWS_WITH_AS(set_config(c), doctest::Contains("set_config: disable_plugins: invalid plugin name"),
                       ConfigError);
  Config long_entry;
  long_entry.plugin_path = {"/" + std::string(5000, 'p')};  // what `tileops --plugin-path` passes on
  CHECK_THROWS_WITH_AS(set_config(long_entry), doctest::Contains("set_config: plugin_path: the entry"), ConfigError);
}
