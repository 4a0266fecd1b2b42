#include <doctest/doctest.h>

#include "tileops/extend/plugin_host.hpp"
#include "plugin_host/corpus.hpp"
#include "support/temp_dir.hpp"

using tileops::plugin::PluginHost;
using tileops::test::corpus;
using tileops::test::has_kernel_type;
using tileops::test::has_runtime;
using tileops::test::has_target;

namespace {

// Loads `directories` and returns the single failure, checking it names `plugin` and its file.
tileops::PluginLoadFailure only_failure(PluginHost& host, const std::string& case_dir, const std::string& plugin) {
  REQUIRE(host.failures().size() == 1);
  const auto& f = host.failures()[0];
  CHECK(f.plugin == plugin);
  CHECK(f.path == corpus(case_dir) / ("libtileops_" + plugin + ".so"));
  return f;
}

}  // namespace

TEST_CASE("a file that is not a shared object is a load failure, and the other plugins still load") {
  PluginHost host;
  host.load({corpus("garbage"), corpus("good")}, {});
  const auto f = only_failure(host, "garbage", "garbage");
  CHECK(f.reason == "is not an ELF file (it does not start with the bytes 0x7f 'E' 'L' 'F'): not a shared object");
  REQUIRE(host.loaded().size() == 1);
  CHECK(host.loaded()[0].name == "good");
}

TEST_CASE("a shared object without the plugin entry points is a load failure") {
  PluginHost host;
  host.load({corpus("nosymbols")}, {});
  CHECK(only_failure(host, "nosymbols", "nosymbols").reason ==
        "is not a tileops plugin: it does not export tileops_plugin_abi_version");
  CHECK(host.loaded().empty());
}

TEST_CASE("a plugin missing some entry points is a load failure naming each missing one") {
  PluginHost host;
  host.load({corpus("partial")}, {});
  CHECK(only_failure(host, "partial", "partial").reason ==
        "lacks plugin entry points: it does not export tileops_plugin_abi_facts, tileops_plugin_name, "
        "tileops_plugin_version, tileops_plugin_register");
}

TEST_CASE("the ABI version is checked before anything else: a wrong one is a failure and registration never runs") {
  PluginHost host;
  host.load({corpus("wrongabi")}, {});
  const auto f = only_failure(host, "wrongabi", "wrongabi");
  CHECK(f.reason.starts_with("was built for plugin ABI version 999, but this libtileops speaks version " +
                             std::to_string(TILEOPS_PLUGIN_ABI_VERSION)));
  CHECK_FALSE(has_target("wrongabi_target"));
}

TEST_CASE("a plugin whose declared name differs from its file name is refused before registration") {
  PluginHost host;
  host.load({corpus("renamed")}, {});
  CHECK(only_failure(host, "renamed", "renamed").reason ==
        "declares the plugin name 'other', but its file name makes it 'renamed'; the file must be named "
        "libtileops_other.so");
  CHECK_FALSE(has_target("renamed_target"));
}

TEST_CASE("a plugin that throws half-way through registration is rolled back entirely") {
  PluginHost host;
  host.load({corpus("throws")}, {});
  CHECK(only_failure(host, "throws", "throws").reason ==
        "failed to register: tileops::ValueError: the throws plugin gave up half-way through registration");
  CHECK(host.loaded().empty());
  CHECK_FALSE(has_runtime("throwdev"));
  CHECK_FALSE(has_target("throwtarget"));
  CHECK(tileops::registered_targets("PluginTestFwdOp").empty());
}

TEST_CASE("a plugin calling load_backends from its registration fails instead of deadlocking") {
  PluginHost host;
  host.load({corpus("reentrant")}, {});
  CHECK(only_failure(host, "reentrant", "reentrant").reason ==
        "failed to register: tileops::BackendError: load_backends: called while plugins are loading; a plugin must "
        "not construct ops or query the loaded plugins from its registration");
  CHECK_FALSE(has_target("reentrant_target"));
}

TEST_CASE("a plugin registering what another plugin already registered fails and leaves nothing of its own") {
  PluginHost host;
  host.load({corpus("good"), corpus("duplicate")}, {});
  REQUIRE(host.loaded().size() == 1);
  CHECK(host.loaded()[0].name == "good");
  REQUIRE(host.failures().size() == 4);
  const std::string prefix = "failed to register: tileops::BackendError: ";
  // File name order: dup_builder, dup_detector, dup_kernel, dup_runtime.
  CHECK(host.failures()[0].plugin == "dup_builder");
  CHECK(host.failures()[0].reason ==
        prefix + "register_kernel_builder: plugin 'dup_builder' cannot register a builder of target 'plugtarget' for "
                 "PluginTestFwdOp: plugin 'good' registered one first (one builder per op and target)");
  CHECK(host.failures()[1].plugin == "dup_detector");
  CHECK(host.failures()[1].reason ==
        prefix + "register_detector: plugin 'dup_detector' cannot register a detector for target 'plugtarget': plugin "
                 "'good' registered one first (one detector per target)");
  CHECK(host.failures()[2].plugin == "dup_kernel");
  CHECK(host.failures()[2].reason ==
        prefix + "register_kernel_type: plugin 'dup_kernel' cannot register key 'good_kernel' for PluginTestFwdOp: plugin "
                 "'good' registered that key first (keys are unique per op; choose another key, or disable one of the "
                 "two)");
  CHECK(host.failures()[3].plugin == "dup_runtime");
  CHECK(host.failures()[3].reason ==
        prefix + "register_device_runtime: plugin 'dup_runtime' cannot register a runtime for device type 'plugdev': "
                 "plugin 'good' registered one first (one runtime per device type)");

  for (const char* kind : {"builder", "detector", "kernel", "runtime"}) {
    CAPTURE(kind);
    CHECK_FALSE(has_target(std::string("fresh_") + kind));
  }
  // The good plugin's registrations are untouched by the rollbacks.
  CHECK(tileops::registered_targets("PluginTestFwdOp") == std::vector<std::string>{"plugtarget"});
  CHECK(has_target("plugtarget"));
  CHECK(has_runtime("plugdev"));
  CHECK(has_kernel_type("PluginTestFwdOp", "good_kernel"));
}

TEST_CASE("a failed plugin's name still shadows later files of that name") {
  tileops::test::TempDir dir;
  std::filesystem::copy_file(corpus("garbage") / "libtileops_garbage.so", dir.path() / "libtileops_good.so");
  PluginHost host;
  host.load({dir.path(), corpus("good")}, {});
  REQUIRE(host.failures().size() == 1);
  CHECK(host.failures()[0].reason.starts_with("is not an ELF file"));
  CHECK(host.loaded().empty());
  REQUIRE(host.skipped().size() == 1);
  CHECK(host.skipped()[0].path == corpus("good") / "libtileops_good.so");
}
