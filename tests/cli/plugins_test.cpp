#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "plugin_host/corpus.hpp"
#include "tileops/paths.hpp"
#include "support/run_command.hpp"

using tileops::test::corpus;
using tileops::test::run_command;

namespace {

// Runs `tileops <args>` with TILEOPS_PLUGIN_PATH set to the corpus cases `cases` (':'-joined)
// and the corpus's manifest (PluginTestFwdOp) on TILEOPS_MANIFEST_PATH; warnings go to stderr,
// which is dropped.
tileops::test::CommandResult run_with_plugins(const std::string& cases, const std::string& args,
                                              const std::string& extra_env = "") {
  std::string path;
  std::size_t start = 0;
  while (start <= cases.size()) {
    const std::size_t end = std::min(cases.find(':', start), cases.size());
    path += (path.empty() ? "" : ":") + corpus(cases.substr(start, end - start)).string();
    start = end + 1;
  }
  return run_command("TILEOPS_PLUGIN_PATH=" + path + " TILEOPS_MANIFEST_PATH=" + TILEOPS_TEST_DATA_DIR +
                     "/plugin_manifests " + extra_env + " " + TILEOPS_CLI_PATH + " " + args + " 2>/dev/null");
}

// The entries of a plugins/skipped/load_failures list that come from the corpus: the build's
// own plugin directory (cpu, cuda) is always on the plugin path too.
nlohmann::json from_corpus(const nlohmann::json& list) {
  const std::string root = corpus("").parent_path().string();
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : list) {
    if (e.at("path").get<std::string>().rfind(root, 0) == 0) out.push_back(e);
  }
  return out;
}

}  // namespace

TEST_CASE("tileops plugins --json lists the loaded plugins, each load failure with its reason, and skipped files") {
  const auto r = run_with_plugins("good:garbage:shadow:throws:duplicate", "plugins --json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(from_corpus(j.at("plugins")).size() == 1);
  CHECK(from_corpus(j["plugins"])[0] == nlohmann::json{{"name", "good"},
                                          {"version", "1.2.3"},
                                          {"path", (corpus("good") / "libtileops_good.so").string()},
                                          {"warnings", nlohmann::json::array()}});
  const auto& failures = from_corpus(j.at("load_failures"));
  REQUIRE(failures.size() == 6);
  CHECK(failures[0].at("plugin") == "garbage");
  CHECK(failures[0].at("path") == (corpus("garbage") / "libtileops_garbage.so").string());
  CHECK(failures[0].at("reason").get<std::string>().starts_with("is not an ELF file"));
  CHECK(failures[1].at("plugin") == "throws");
  CHECK(failures[1].at("reason") ==
        "failed to register: tileops::ValueError: the throws plugin gave up half-way through registration");
  CHECK(failures[2].at("plugin") == "dup_builder");
  CHECK(failures[5].at("plugin") == "dup_runtime");
  CHECK(failures[5].at("reason") ==
        "failed to register: tileops::BackendError: register_device_runtime: plugin 'dup_runtime' cannot register a "
        "runtime for device type 'plugdev': plugin 'good' registered one first (one runtime per device type)");
  REQUIRE(from_corpus(j.at("skipped")).size() == 1);
  CHECK(from_corpus(j["skipped"])[0].at("path") == (corpus("shadow") / "libtileops_good.so").string());
  CHECK(from_corpus(j["skipped"])[0].at("reason") == "shadowed by " + (corpus("good") / "libtileops_good.so").string());
  // The distribution's own plugin directory comes first, then the configured ones.
  CHECK(j.at("plugin_path")[0] == tileops::default_plugin_directory().string());
  CHECK(j.at("plugin_path")[1] == corpus("good").string());
}

TEST_CASE("tileops plugins prints the loaded plugins and the failures as text") {
  const auto r = run_with_plugins("good:wrongabi", "plugins");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("good 1.2.3  " + (corpus("good") / "libtileops_good.so").string()) != std::string::npos);
  CHECK(r.out.find("libtileops_wrongabi.so was built for plugin ABI version 999") != std::string::npos);
}

TEST_CASE("the --plugin-path flag replaces TILEOPS_PLUGIN_PATH for tileops plugins") {
  const auto r = run_with_plugins("garbage", "plugins --json --plugin-path " + corpus("shadow").string());
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(from_corpus(j.at("plugins")).size() == 1);
  CHECK(from_corpus(j["plugins"])[0].at("version") == "2.0.0");
  CHECK(from_corpus(j.at("load_failures")).empty());
}

TEST_CASE("TILEOPS_DISABLE_PLUGINS keeps a plugin from loading and tileops plugins says why") {
  const auto r = run_with_plugins("good", "plugins --json", "TILEOPS_DISABLE_PLUGINS=good");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(from_corpus(j.at("plugins")).empty());
  REQUIRE(from_corpus(j.at("skipped")).size() == 1);
  CHECK(from_corpus(j["skipped"])[0].at("reason") == "disabled by environment variable TILEOPS_DISABLE_PLUGINS");
}

TEST_CASE("tileops targets --json lists each target with the ops it builds, and nothing of a failed plugin") {
  const auto r = run_with_plugins("good:throws:duplicate", "targets --json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("targets") == nlohmann::json::parse(R"([{"name": "plugtarget", "ops": ["PluginTestFwdOp"]}])"));
  CHECK(j.at("default_target").is_null());
}

TEST_CASE("tileops targets prints the targets as text") {
  const auto r = run_with_plugins("good", "targets --default-target plugtarget");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("default target: plugtarget") != std::string::npos);
  CHECK(r.out.find("  plugtarget: PluginTestFwdOp") != std::string::npos);
}

TEST_CASE("tileops info --json reports the plugins, the load failures, the targets and a plugin's device type") {
  const auto r = run_with_plugins("good:partial", "info --json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(from_corpus(j.at("plugins")).size() == 1);
  CHECK(from_corpus(j["plugins"])[0].at("name") == "good");
  CHECK(from_corpus(j["plugins"])[0].at("version") == "1.2.3");
  REQUIRE(from_corpus(j.at("load_failures")).size() == 1);
  CHECK(from_corpus(j["load_failures"])[0].at("plugin") == "partial");
  CHECK(from_corpus(j["load_failures"])[0].at("reason").get<std::string>().starts_with("lacks plugin entry points"));
  CHECK(j.at("targets") == nlohmann::json::parse(R"([{"name": "plugtarget", "ops": ["PluginTestFwdOp"]}])"));
  CHECK(j.at("default_target").is_null());
  bool plugdev = false;
  for (const auto& d : j.at("devices")) plugdev = plugdev || d.at("type") == "plugdev";
  CHECK(plugdev);
}

TEST_CASE("a plugin directory that is a file is a load failure without a plugin name") {
  const auto r = run_with_plugins("good/libtileops_good.so", "plugins --json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(from_corpus(j.at("load_failures")).size() == 1);
  CHECK(from_corpus(j["load_failures"])[0].at("plugin").is_null());
  CHECK(from_corpus(j["load_failures"])[0].at("reason") == "is on the plugin path but is not a directory");
}
