#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "support/run_command.hpp"
#include "support/temp_dir.hpp"

using tileops::test::run_command;

TEST_CASE("tileops info --json prints the version, config file, plugin path and devices") {
  const auto r = run_command(std::string(TILEOPS_CLI_PATH) + " info --json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("version").is_string());
  CHECK(j.contains("config_file"));
  CHECK(j.at("plugin_path").is_array());
  CHECK(j.at("plugin_path").back().get<std::string>().ends_with("tileops/plugins"));
  REQUIRE(j.at("devices").is_array());
  CHECK(j.at("devices")[0].at("type") == "cpu");
  CHECK(j.at("devices")[0].at("count") == 1);
}

TEST_CASE("tileops info reports the config file given with --config and its values") {
  tileops::test::TempDir dir;
  const auto conf = dir.write("t.conf", "default_target = builtin\nplugin_path = extra\n");
  const auto r = run_command(std::string(TILEOPS_CLI_PATH) + " info --json --config " + conf.string());
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("config_file") == conf.string());
  CHECK(j.at("default_target") == "builtin");
  // After the distribution's own plugin directory.
  CHECK(j.at("plugin_path")[1] == (dir.path() / "extra").string());
}

TEST_CASE("tileops info with a malformed config exits 1 naming the file and line") {
  tileops::test::TempDir dir;
  const auto conf = dir.write("t.conf", "colour = blue\n");
  const auto r = run_command(std::string(TILEOPS_CLI_PATH) + " info --config " + conf.string() + " 2>&1");
  CHECK(r.status == 1);
  CHECK(r.out.find("t.conf:1: key 'colour': unknown key") != std::string::npos);
}

TEST_CASE("the tileops program answers --help and rejects unknown commands and options") {
  CHECK(run_command(std::string(TILEOPS_CLI_PATH) + " --help").status == 0);
  const auto help = run_command(std::string(TILEOPS_CLI_PATH) + " info --help");
  CHECK(help.status == 0);
  CHECK(help.out.find("--json") != std::string::npos);
  const auto unknown = run_command(std::string(TILEOPS_CLI_PATH) + " frobnicate 2>&1");
  CHECK(unknown.status == 2);
  CHECK(unknown.out.find("unknown command 'frobnicate'") != std::string::npos);
  const auto bad_option = run_command(std::string(TILEOPS_CLI_PATH) + " info --colour 2>&1");
  CHECK(bad_option.status == 2);
  CHECK(bad_option.out.find("colour") != std::string::npos);
}

TEST_CASE("tileops info shows the manifest path and the kernel choice settings with where each came from") {
  const auto r = run_command("TILEOPS_MANIFEST_PATH=/nonexistent/manifests TILEOPS_DISABLE_KERNELS=cpu_gelu "
                             "TILEOPS_PREFER_KERNELS=RMSNormFwdOp=rms_norm_reference " +
                             std::string(TILEOPS_CLI_PATH) + " info --json 2>/dev/null");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("manifest_path") == nlohmann::json::array({"/nonexistent/manifests"}));
  CHECK(j.at("disable_kernels").at("values") == nlohmann::json::array({"cpu_gelu"}));
  CHECK(j.at("disable_kernels").at("from") == "environment variable TILEOPS_DISABLE_KERNELS");
  CHECK(j.at("prefer_kernels").at("values") == nlohmann::json{{"RMSNormFwdOp", "rms_norm_reference"}});
  CHECK(j.at("disable_plugins").at("from").is_null());
  const auto text = run_command("TILEOPS_DISABLE_KERNELS=cpu_gelu " + std::string(TILEOPS_CLI_PATH) + " info 2>/dev/null");
  CHECK(text.out.find("disable_kernels: cpu_gelu  (from environment variable TILEOPS_DISABLE_KERNELS)") != std::string::npos);
  CHECK(text.out.find("manifest path: (none: the built-in manifests only)") != std::string::npos);
}
