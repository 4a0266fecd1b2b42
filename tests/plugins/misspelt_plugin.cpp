// Registers for ops that do not exist (misspellings of RMSNormFwdOp and GemmFwdOp): a load
// failure suggesting the right names.
#include "stub_kernels.hpp"
#include "plugin_test_types.hpp"
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN(misspelt, "0.1.0", registrar) {
  using namespace tileops::test_plugins;
  registrar.register_kernel_type<StubRMSNorm>("RMSNormOp", "misspelt_rms_norm");
  registrar.register_detector("misspelt_target", [](const tileops::Device&) { return false; });
  registrar.register_kernel_builder("GemmFwdOpp", "misspelt_target", build_empty_kernel);
}
