// The config values the plugin boundary adds: allow_insecure_plugins (file key and
// TILEOPS_ALLOW_INSECURE_PLUGINS) and where default_target came from.
#include <doctest/doctest.h>

#include "support/temp_dir.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"

using namespace tileops;
namespace fs = std::filesystem;

TEST_CASE("allow_insecure_plugins is false unless the file or TILEOPS_ALLOW_INSECURE_PLUGINS sets it") {
  test::TempDir dir;
  const test::ScopedEnv unset("TILEOPS_ALLOW_INSECURE_PLUGINS", nullptr);
  CHECK_FALSE(parse_config_file(dir.write("none.conf", "log_level = warn\n")).allow_insecure_plugins);
  CHECK(parse_config_file(dir.write("yes.conf", "allow_insecure_plugins = true\n")).allow_insecure_plugins);
  CHECK_FALSE(parse_config_file(dir.write("no.conf", "allow_insecure_plugins = false\n")).allow_insecure_plugins);
  CHECK_THROWS_WITH_AS(parse_config_file(dir.write("bad.conf", "\nallow_insecure_plugins = maybe\n")),
                       doctest::Contains("bad.conf:2: key 'allow_insecure_plugins': invalid value 'maybe'; expected "
                                         "true or false"),
                       ConfigError);
  const test::ScopedEnv on("TILEOPS_ALLOW_INSECURE_PLUGINS", "1");
  CHECK(load_config(dir.path() / "no.conf").allow_insecure_plugins);
  const test::ScopedEnv bad("TILEOPS_ALLOW_INSECURE_PLUGINS", "yes please");
  CHECK_THROWS_WITH_AS(load_config(dir.path() / "no.conf"),
                       doctest::Contains("environment variable TILEOPS_ALLOW_INSECURE_PLUGINS: invalid value 'yes "
                                         "please'; expected true or false"),
                       ConfigError);
}

TEST_CASE("default_target_origin says whether the file (with its line) or the environment set default_target") {
  test::TempDir dir;
  const fs::path file = dir.write("tileops.conf", "log_level = warn\n\ndefault_target = acme\n");
  const test::ScopedEnv unset("TILEOPS_DEFAULT_TARGET", nullptr);
  const Config from_file = load_config(file);
  CHECK(from_file.default_target_origin == "config file " + file.string() + ":3");
  const test::ScopedEnv env("TILEOPS_DEFAULT_TARGET", "other");
  const Config from_env = load_config(file);
  CHECK(from_env.default_target == "other");
  CHECK(from_env.default_target_origin == "environment variable TILEOPS_DEFAULT_TARGET");
  CHECK(load_config(dir.write("plain.conf", "log_level = warn\n")).default_target_origin ==
        "environment variable TILEOPS_DEFAULT_TARGET");
}
