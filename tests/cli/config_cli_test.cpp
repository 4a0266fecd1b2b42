// The config as the tileops program shows it: warnings for entries that match nothing, and
// every file and directory searched.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "support/run_command.hpp"
#include "support/temp_dir.hpp"

using tileops::test::run_command;

namespace {

std::string cli(const std::string& args) { return std::string(TILEOPS_CLI_PATH) + " " + args; }

}  // namespace

TEST_CASE("config entries that match nothing are warned about: a missing plugin directory, an unknown disable_plugins name") {
  const auto r = run_command("TILEOPS_PLUGIN_PATH=/nonexistent/plugins TILEOPS_DISABLE_PLUGINS=nosuch " + cli("plugins 2>&1"));
  CHECK(r.status == 0);
  CHECK(r.out.find("plugin directory /nonexistent/plugins (on the configured plugin_path) does not exist") != std::string::npos);
  CHECK(r.out.find("disable_plugins names 'nosuch', but no plugin file libtileops_nosuch.so is on the plugin path") !=
        std::string::npos);
}

TEST_CASE("tileops info shows every file searched for the config and every plugin directory") {
  tileops::test::TempDir dir;
  const auto r = run_command("XDG_CONFIG_HOME=" + dir.path().string() + " XDG_CONFIG_DIRS=/etc/one " + cli("info --json"));
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& searched = j.at("config_search_path");
  REQUIRE(searched.size() == 3);
  CHECK(searched[0] == nlohmann::json{{"path", (dir.path() / "tileops/tileops.conf").string()}, {"exists", false}});
  CHECK(searched[1].at("path") == "/etc/one/tileops/tileops.conf");
  CHECK(searched[2].at("path") == "/etc/tileops/tileops.conf");
  const auto text = run_command("XDG_CONFIG_HOME=" + dir.path().string() + " " + cli("info"));
  CHECK(text.out.find("config files searched:\n  " + (dir.path() / "tileops/tileops.conf").string() + "  (absent)") !=
        std::string::npos);
}
