#include <doctest/doctest.h>

#include "plugin/plugin_discovery.hpp"
#include "support/temp_dir.hpp"

using tileops::plugin::discover_plugins;
using tileops::plugin::plugin_name_of;

TEST_CASE("a plugin name is what follows libtileops_ in a libtileops_<name>.so file name") {
  CHECK(plugin_name_of("libtileops_cpu.so") == "cpu");
  CHECK(plugin_name_of("libtileops_acme_npu.so") == "acme_npu");
  CHECK_FALSE(plugin_name_of("libtileops.so").has_value());
  CHECK_FALSE(plugin_name_of("libtileops_.so").has_value());
  CHECK_FALSE(plugin_name_of("libtileops_cpu.so.1").has_value());
  CHECK_FALSE(plugin_name_of("libother_cpu.so").has_value());
  CHECK_FALSE(plugin_name_of("libtileops_cpu.a").has_value());
}

TEST_CASE("discovery lists entries named like plugins in path order, then file name order, and ignores other files") {
  tileops::test::TempDir first;
  tileops::test::TempDir second;
  first.write("libtileops_zeta.so", "");
  first.write("libtileops_alpha.so", "");
  first.write("libtileops.so", "");
  first.write("README", "");
  std::filesystem::create_directories(first.path() / "libtileops_dir.so");
  second.write("libtileops_beta.so", "");
  second.write("libtileops_alpha.so", "");

  const auto found = discover_plugins({second.path(), first.path()});
  REQUIRE(found.candidates.size() == 5);
  CHECK(found.candidates[0].name == "alpha");
  CHECK(found.candidates[0].path == second.path() / "libtileops_alpha.so");
  CHECK(found.candidates[1].name == "beta");
  CHECK(found.candidates[2].name == "alpha");
  CHECK(found.candidates[2].path == first.path() / "libtileops_alpha.so");
  CHECK(found.candidates[3].name == "dir");  // not a file: the host reports it when it tries to load it
  CHECK(found.candidates[4].name == "zeta");
  CHECK(found.failures.empty());
}

TEST_CASE("a plugin directory that does not exist is skipped without a failure") {
  tileops::test::TempDir dir;
  const auto found = discover_plugins({dir.path() / "missing"});
  CHECK(found.candidates.empty());
  CHECK(found.failures.empty());
}

TEST_CASE("a plugin path entry that is a file is a failure naming the entry") {
  tileops::test::TempDir dir;
  const auto file = dir.write("not_a_dir", "");
  const auto found = discover_plugins({file});
  CHECK(found.candidates.empty());
  REQUIRE(found.failures.size() == 1);
  CHECK(found.failures[0].path == file);
  CHECK_FALSE(found.failures[0].plugin.has_value());
  CHECK(found.failures[0].reason == "is on the plugin path but is not a directory");
}
