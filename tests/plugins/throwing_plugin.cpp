// Registers a device runtime and a builder, then throws: the host must roll both back.
#include "plugin_test_types.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/plugin.hpp"

using namespace tileops;
using namespace tileops::test_plugins;

TILEOPS_PLUGIN(throws, "0.1.0", registrar) {
  registrar.register_device_runtime(std::make_shared<HostBackedRuntime>("throwdev"));
  registrar.register_kernel_builder(kOp, "throwtarget", build_empty_kernel);
  throw ValueError("the throws plugin gave up half-way through registration");
}
