#include <doctest/doctest.h>

#include "tileops/extend/plugin_host.hpp"
#include "plugin_host/corpus.hpp"
#include "tileops/tensor.hpp"
#include "plugins/plugin_test_types.hpp"

using tileops::plugin::PluginHost;
using tileops::test::corpus;
using tileops::test::has_kernel_type;
using tileops::test::has_runtime;
using tileops::test::has_target;

TEST_CASE("a good plugin's device runtime, target and kernel type are registered under its name") {
  PluginHost host;
  host.load({corpus("good")}, {});
  REQUIRE(host.failures().empty());
  REQUIRE(host.loaded().size() == 1);
  CHECK(host.loaded()[0].name == "good");
  CHECK(host.loaded()[0].version == "1.2.3");
  CHECK(host.loaded()[0].path == corpus("good") / "libtileops_good.so");

  CHECK(has_runtime("plugdev"));
  CHECK(has_target("plugtarget"));
  CHECK(tileops::target_ops("plugtarget") == std::vector<std::string>{"PluginTestFwdOp"});
  const auto types = tileops::registered_kernel_types("PluginTestFwdOp");
  REQUIRE(types.size() == 1);
  CHECK(types[0].key == "good_kernel");
  CHECK(types[0].owner == "good");
  CHECK(types[0].type->interface_name == "PluginTestInterface");
  CHECK(types[0].type->devices == std::vector<std::string>{"plugdev"});
}

TEST_CASE("what a good plugin registered works: its runtime allocates and its kernel runs") {
  using tileops::test_plugins::PluginTestCall;
  using tileops::test_plugins::PluginTestInterface;
  PluginHost host;
  host.load({corpus("good")}, {});
  REQUIRE(host.loaded().size() == 1);

  const auto t = tileops::Tensor::empty({4}, tileops::DType::float32, tileops::Device::parse("plugdev:0"));
  CHECK(t.device().str() == "plugdev:0");

  const auto type = tileops::registered_kernel_types("PluginTestFwdOp").at(0).type;
  PluginTestCall call;
  call.factor = 3;
  const auto kernel = type->entry_for(call).factory();
  CHECK(static_cast<PluginTestInterface*>(type->as_interface(*kernel))->forward(5) == 15);
}

TEST_CASE("destroying a plugin host rolls back the registrations of the plugins it loaded") {
  {
    PluginHost host;
    host.load({corpus("good")}, {});
    REQUIRE(host.loaded().size() == 1);
  }
  CHECK_FALSE(has_runtime("plugdev"));
  CHECK_FALSE(has_target("plugtarget"));
  CHECK_FALSE(has_kernel_type("PluginTestFwdOp", "good_kernel"));
  PluginHost again;
  again.load({corpus("good")}, {});
  CHECK(again.loaded().size() == 1);
  CHECK(again.failures().empty());
}

TEST_CASE("the same plugin name found twice: the first on the path wins, the later one is skipped") {
  PluginHost host;
  host.load({corpus("shadow"), corpus("good")}, {});
  REQUIRE(host.loaded().size() == 1);
  CHECK(host.loaded()[0].version == "2.0.0");
  CHECK(host.loaded()[0].path == corpus("shadow") / "libtileops_good.so");
  REQUIRE(host.skipped().size() == 1);
  CHECK(host.skipped()[0].name == "good");
  CHECK(host.skipped()[0].path == corpus("good") / "libtileops_good.so");
  CHECK(host.skipped()[0].reason == "shadowed by " + (corpus("shadow") / "libtileops_good.so").string());
  CHECK(host.failures().empty());
}

TEST_CASE("a directory listed twice on the plugin path loads its plugins once and skips nothing") {
  PluginHost host;
  host.load({corpus("good"), corpus("good")}, {});
  CHECK(host.loaded().size() == 1);
  CHECK(host.skipped().empty());
  CHECK(host.failures().empty());
}

TEST_CASE("a name loaded by an earlier load() call shadows the same name in a later one") {
  PluginHost host;
  host.load({corpus("good")}, {});
  host.load({corpus("shadow")}, {});
  CHECK(host.loaded().size() == 1);
  REQUIRE(host.skipped().size() == 1);
  CHECK(host.skipped()[0].reason.starts_with("shadowed by "));
  CHECK(host.failures().empty());
}

TEST_CASE("a plugin named in disable_plugins is not loaded") {
  PluginHost host;
  host.load({corpus("good"), corpus("shadow")}, {.disabled = {"good"}});
  CHECK(host.loaded().empty());
  REQUIRE(host.skipped().size() == 2);
  CHECK(host.skipped()[0].reason == "disabled by the config's disable_plugins");
  CHECK(host.skipped()[1].reason == "disabled by the config's disable_plugins");
  CHECK_FALSE(has_runtime("plugdev"));
}
