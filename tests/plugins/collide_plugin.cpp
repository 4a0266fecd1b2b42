// Registers a target of its own, then kernel type key 'cpu_rms_norm', which the cpu plugin (the
// distribution's, loaded first) registered: this plugin must fail, the cpu plugin must not.
#include "stub_kernels.hpp"
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN(collide, "0.1.0", registrar) {
  registrar.register_detector("collide_target", [](const tileops::Device&) { return false; });
  registrar.register_kernel_type<tileops::test_plugins::StubRMSNorm>("RMSNormFwdOp", "cpu_rms_norm");
}
