// A well-behaved plugin: registers the device type "plugdev", the target "plugtarget" (a detector
// claiming plugdev devices and a builder for PluginTestFwdOp) and the kernel type "good_kernel".
// Built twice, as 1.2.3 and as 2.0.0, to test shadowing.
#include "plugin_test_types.hpp"
#include "tileops/extend/plugin.hpp"

using namespace tileops;
using namespace tileops::test_plugins;

TILEOPS_PLUGIN(good, TILEOPS_TEST_PLUGIN_VERSION, registrar) {
  registrar.register_device_runtime(std::make_shared<HostBackedRuntime>("plugdev"));
  registrar.register_detector("plugtarget", [](const Device& d) { return d.type().name() == "plugdev"; });
  registrar.register_kernel_builder(kOp, "plugtarget", build_empty_kernel);
  registrar.register_kernel_type<PluginTestKernel>(kOp, "good_kernel");
}
